/**
 * The material of the chain vectors (SPEC §4-§8): the base Session, written by the real
 * writer with fixed keys, and the helpers that alter one thing in it.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordWriter, PolicySetHash, RequestDigest, SigningKey, type OutcomePayload } from "@aegis/format";
import { RECORDED_REASON, resealLines, type LooseLine, type ResealOptions, insecureDevKey } from "@aegis/format/internal";
import { answerVector, type Vector } from "@aegis/vectors/oracle";
import type { Polarity } from "./vector-set.js";

const DEV = insecureDevKey();
/** The second key of the rotation vectors: the seed of 32 bytes 0x09. */
export const ROTATED = SigningKey.fromSeed(new Uint8Array(32).fill(9));
export const DEV_PUBLIC = DEV.publicKeyHex;
export const ROTATED_PUBLIC = ROTATED.publicKeyHex;
const POLICY = PolicySetHash.of("test-policy-set");
/** The identity point's encoding: a public key of small order. */
export const IDENTITY = Uint8Array.from([1, ...new Array<number>(31).fill(0)]);
/** y = 2: no x satisfies the curve equation. */
export const NOT_A_POINT = Uint8Array.from([2, ...new Array<number>(31).fill(0)]);

function outcome(callId: string, tool = "fs.read"): OutcomePayload {
  return {
    call_id: callId,
    tool_id: tool,
    request_digest: RequestDigest.of(Buffer.from(`request ${callId}`)),
    policy_set_hash: POLICY,
    policy: { status: "allowed" },
    capability: { status: "denied", reason: RECORDED_REASON.notEvaluated },
    execution: { status: "success" },
    decision_axes: { capability: "fs.read", role: "ops", matched_rule: "allow-read" },
  };
}

/**
 * The base Session, written by the real writer: open, two calls, a park and its decision,
 * close. Without a clock its Lines carry no `time`, as the reference's do; with one, each
 * carries the time that clock gives (SPEC §13.7).
 */
export async function baseSession(clock: (() => Date) | false = false): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "aegis-vectors-"));
  try {
    const path = join(dir, "base.aarl");
    const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true, clock });
    for (const id of ["call-0", "call-1"]) {
      await writer.intent({ call_id: id, tool_id: "fs.read", request_digest: RequestDigest.of(Buffer.from(`request ${id}`)), policy_set_hash: POLICY });
      await writer.outcome(outcome(id));
    }
    await writer.outcome({ ...outcome("call-park", "net.post"), policy: { status: "pending_approval", approval_id: "apr-1" } });
    await writer.decision({ approval_id: "apr-1", verdict: { verdict: "denied", reason: "not today" } });
    await writer.close();
    return await readFile(path, "utf8");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A clock that reads 2026-12-03T12:00:00.000Z and then 7 ms later at each reading: the same times on every run. */
export function steadyClock(): () => Date {
  let readings = 0;
  return () => new Date(Date.UTC(2026, 11, 3, 12, 0, 0, 0) + 7 * readings++);
}

export interface ChainCase {
  readonly name: string;
  readonly polarity: Polarity;
  readonly description: string;
  readonly spec: readonly string[];
  readonly bytes: string | Uint8Array;
  readonly trust?: readonly string[];
}

/** What every chain case is made from: the base Session's Lines, and ways to alter and reseal them. */
export function chainKit(base: string) {
  const lines = base
    .trimEnd()
    .split("\n")
    .map((row) => JSON.parse(row) as LooseLine);
  const rows = base.split("\n");
  const seal = (ls: readonly LooseLine[], options: Partial<ResealOptions> = {}): string => resealLines(ls, { ...options, key: options.key ?? DEV });
  const withRow = (i: number, row: string): string => rows.map((r, j) => (j === i ? row : r)).join("\n");
  const parsed = (text: string): LooseLine[] =>
    text
      .trimEnd()
      .split("\n")
      .map((row) => JSON.parse(row) as LooseLine);
  const renumber = (ls: readonly LooseLine[]): LooseLine[] => ls.map((l, i) => ({ ...l, seq: i }));
  const edit = (i: number, change: (l: LooseLine) => LooseLine): LooseLine[] => lines.map((l, j) => (j === i ? change(l) : l));
  const insertAt = (i: number, line: LooseLine): LooseLine[] => renumber([...lines.slice(0, i), line, ...lines.slice(i)]);
  const decision = lines.find((l) => l["line_type"] === "decision") ?? {};
  const close = lines.at(-1) ?? {};
  const again = lines.map((l) => JSON.parse(JSON.stringify(l).replaceAll('"apr-1"', '"apr-2"')) as LooseLine);
  const twoSessions = [...lines, ...again];
  /** Two Sessions whose second decides the first's park again, approving what the first denied. */
  const decidedAgainLater = [
    ...lines,
    ...again.map((l) => (l["line_type"] === "decision" ? { ...l, approval_id: "apr-1", verdict: { verdict: "approved", scope: { tool_id: "net.post" } } } : l)),
  ];
  const rotatedSecond = new Map(lines.map((_, i) => [lines.length + i, ROTATED] as const));
  const unknownLine: LooseLine = { schema_version: 2, line_type: "attestation", seq: 0, prev_hash: "" };
  const checkpoint: LooseLine = { schema_version: 2, line_type: "checkpoint", seq: 0, prev_hash: "" };
  const chainCase = (
    name: string,
    polarity: Polarity,
    spec: readonly string[],
    description: string,
    bytes: string | Uint8Array,
    trust?: readonly string[],
  ): ChainCase => (trust === undefined ? { name, polarity, spec, description, bytes } : { name, polarity, spec, description, bytes, trust });

  return {
    base,
    lines,
    rows,
    seal,
    withRow,
    parsed,
    renumber,
    edit,
    insertAt,
    decision,
    close,
    twoSessions,
    decidedAgainLater,
    again,
    rotatedSecond,
    unknownLine,
    checkpoint,
    chainCase,
  };
}

export async function chainAnswerOf(
  bytes: string | Uint8Array,
  trust: readonly string[] | null,
): Promise<Extract<Vector, { readonly kind: "chain" }>["expected"]> {
  const dir = await mkdtemp(join(tmpdir(), "aegis-vectors-"));
  try {
    const path = join(dir, "v.aarl");
    await writeFile(path, bytes);
    return await answerVector({ kind: "chain", record: path, trust });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What chainKit gives the case lists (chains.ts, chains-trust-caps.ts). */
export type ChainKit = ReturnType<typeof chainKit>;
