import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { LAYERS } from "../house/verifier-core.js";

/**
 * ADR 0026: a mutant of the verifier core is left out of the mutation score only when no
 * test can tell it from the code, and then it is listed, with why, in
 * stryker-equivalents.md. A `Stryker disable` comment in the core names one such entry
 * (`equivalent E<n>`) for one mutator on the next line, and each entry is named once.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const configUrl = new URL("../../stryker.config.mjs", import.meta.url).href;
const { default: config } = (await import(configUrl)) as { default: { mutate: string[] } };
const equivalents = readFileSync(`${ROOT}stryker-equivalents.md`, "utf8");

/** Rows of the table: `| E<n> | <file> | <mutator> | <mutant> | <why> |`. */
const listed = [...equivalents.matchAll(/^\| (E\d+) \| `([^`]+)` \| (\w+) \| (.+?) \| (.+?) \|$/gm)].map((m) => ({
  id: m[1] ?? "",
  file: m[2] ?? "",
  mutator: m[3] ?? "",
  why: m[5] ?? "",
}));

const comments = config.mutate.flatMap((file) =>
  readFileSync(`${ROOT}${file}`, "utf8")
    .split("\n")
    .flatMap((text, i) => (/Stryker disable/i.test(text) ? [{ file, line: i + 1, text: text.trim() }] : [])),
);

describe("equivalent mutants of the verifier core (ADR 0026)", () => {
  it("mutates the verifier's core, every file of it, and the wire and crypto code its verdicts rest on", () => {
    expect(config.mutate.filter((f) => f.startsWith("packages/format/src/verify/")).sort()).toEqual(
      LAYERS.core.map((name) => `packages/format/src/verify/${name}.ts`).sort(),
    );
    expect(
      config.mutate
        .filter((f) => !f.startsWith("packages/format/src/verify/"))
        .map((f) => f.replace(/^packages\/format\/src\//, ""))
        .sort(),
    ).toEqual(
      [
        "crypto/ed25519.ts",
        "crypto/signing.ts",
        "wire/canonical.ts",
        "wire/json.ts",
        "wire/json-value.ts",
        "wire/line-members.ts",
        "wire/line-read.ts",
        "wire/line-time.ts",
      ].sort(),
    );
  });

  it("every Stryker disable comment names one listed entry, for its file and mutator, on the next line only", () => {
    for (const c of comments) {
      const m = /^\/\/ Stryker disable next-line (\w+): equivalent (E\d+)\b/.exec(c.text);
      expect(m, `${c.file}:${c.line}: ${c.text}`).not.toBeNull();
      const entry = listed.find((e) => e.id === m?.[2]);
      expect(entry, `${c.file}:${c.line}`).toMatchObject({ file: c.file, mutator: m?.[1] });
    }
  });

  it("every listed entry has its reason and is named by exactly one comment", () => {
    for (const entry of listed) {
      expect(entry.why.length, entry.id).toBeGreaterThan(20);
      expect(
        comments.filter((c) => new RegExp(`equivalent ${entry.id}\\b`).test(c.text)),
        entry.id,
      ).toHaveLength(1);
    }
    expect(new Set(listed.map((e) => e.id)).size).toBe(listed.length);
  });
});
