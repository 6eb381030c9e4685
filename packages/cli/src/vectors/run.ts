import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { match } from "ts-pattern";
import {
  JsonSyntaxError,
  LineHash,
  describeVerdict,
  parseJson,
  tryCanonicalize,
  verifyChainFile,
  verifyStrict,
  verifyingKey,
} from "@aegis/format";
import { exitCodeOfVerdict } from "../exit-code.js";
import type { CanonicalExpected, ChainExpected, Vector } from "./manifest.js";

/** One vector's outcome: what was expected and what this implementation answered. */
export type VectorResult =
  | { readonly id: string; readonly passed: true }
  | { readonly id: string; readonly passed: false; readonly expected: unknown; readonly actual: unknown };

/** Run one vector against this implementation. Input files are read relative to `dir`. */
export async function runVector(dir: string, vector: Vector): Promise<VectorResult> {
  const actual = await match(vector)
    .with({ kind: "canonical" }, async (v) => canonicalAnswer(await readFile(join(dir, v.input.row), "utf8")))
    .with({ kind: "ed25519" }, async (v) => ed25519Answer(JSON.parse(await readFile(join(dir, v.input.case), "utf8")) as Ed25519Case))
    .with({ kind: "chain" }, (v) => chainAnswer(join(dir, v.input.record), v.input.trust))
    .exhaustive();
  // Compared as the JSON a third party would compare: an absent member and an undefined one are the same.
  const answer = JSON.parse(JSON.stringify(actual)) as unknown;
  return isDeepStrictEqual(answer, vector.expected)
    ? { id: vector.id, passed: true }
    : { id: vector.id, passed: false, expected: vector.expected, actual: answer };
}

/** SPEC §3: parse strictly, then the canonical form and its SHA-256, or why there is none. */
export function canonicalAnswer(row: string): CanonicalExpected {
  let value;
  try {
    value = parseJson(row);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { result: "not_json" };
    throw error;
  }
  const canonical = tryCanonicalize(value);
  if (canonical.ok) return { result: "canonical", canonical: canonical.text, sha256: LineHash.of(canonical.text) };
  return { result: "out_of_space", fault: { code: canonical.fault.code, path: canonical.fault.path } };
}

export interface Ed25519Case {
  readonly public_key: string;
  readonly message: string;
  readonly signature: string;
}

/** SPEC §8.5: the strict rule's answer. A key or signature of the wrong length is refused. */
export function ed25519Answer(c: Ed25519Case): { readonly valid: boolean } {
  const key = verifyingKey(Buffer.from(c.public_key, "hex"));
  if (typeof key === "string") return { valid: false };
  return { valid: verifyStrict(key, Buffer.from(c.message, "hex"), Buffer.from(c.signature, "hex")) };
}

/** SPEC §8: the verifier's whole answer, as a record's reader sees it, with the CLI's exit code. */
export async function chainAnswer(path: string, trust: readonly string[] | null): Promise<ChainExpected> {
  const result = await verifyChainFile(path, trust === null ? {} : { trust });
  return {
    verdict: result.verdict.status,
    reason: result.verdict.status === "verified" ? null : { ...result.verdict.reason },
    text: describeVerdict(result),
    coverage: result.coverage ?? null,
    key_ids: result.key_ids,
    trust_label: result.trust,
    lines: result.lines,
    sessions: result.sessions,
    head: result.head ?? null,
    exit_code: exitCodeOfVerdict(result.verdict),
  };
}
