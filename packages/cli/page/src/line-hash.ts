/**
 * The digest module as `@aegis/format`'s row reader sees it in the page: its `LineHash`, but
 * `of` first takes the hash a worker computed for exactly those bytes (hashes-ahead.ts).
 * scripts/build-page.mjs puts this module in place of `./digest.js` for `wire/row-read.js`
 * alone (which imports only `LineHash` from it), and resolves `aegis-format-digest` to the
 * format's own digest module; everything else is the format's own code.
 */
import { LineHash as FormatLineHash } from "aegis-format-digest";
import { takeHashed } from "./hashes-ahead.js";

export const LineHash: typeof FormatLineHash = {
  ...FormatLineHash,
  of: (input) => (typeof input === "string" ? undefined : (takeHashed(input) as ReturnType<typeof FormatLineHash.of> | undefined)) ?? FormatLineHash.of(input),
};
