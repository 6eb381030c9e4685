/**
 * The digest module as `@aegis/format`'s row reader sees it in the page: its `LineHash`, but
 * `of` first takes the hash a worker computed for exactly those bytes (hashes-ahead.ts).
 * build.mjs puts this module in place of `./digest.js` for `wire/row-read.js` alone (which
 * imports only `LineHash` from it); everything else, the `LineHash` this one falls back to
 * included, is the format's own code, imported by package name.
 */
import { LineHash as FormatLineHash } from "@aegis/format/browser";
import { takeHashed } from "./hashes-ahead.js";

// Each member reads the format's `LineHash` when called, not when this module is evaluated:
// the bundle evaluates this module while `@aegis/format/browser` is still being evaluated.
export const LineHash: typeof FormatLineHash = {
  of: (input) => (typeof input === "string" ? undefined : (takeHashed(input) as ReturnType<typeof FormatLineHash.of> | undefined)) ?? FormatLineHash.of(input),
  parse: (text) => FormatLineHash.parse(text),
};
