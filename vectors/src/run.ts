import { unmatched, exitCodeOfVerdict, JsonSyntaxError, describeIoError, parseJson, tryCanonicalize, verifyStrict, verifyingKey } from "@aegis/format/internal";
import { readInputFile } from "@aegis/format/durable";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative as relativePath, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { match } from "ts-pattern";
import { RecordWriter, LineHash, SigningKey, describeVerdict, type Verification, verifyRecord } from "@aegis/format";
import { checkProof, parseNote, parseVerifierKey, readCheckpointText, verifyWithCheckpoints, type GivenCheckpoint } from "@aegis/proof";
import { VectorsError } from "./vectors-error.js";
import { EnvelopeStore, openEnvelope } from "@aegis/envelope";
import { RateWindows, decide, describeRecheckLine, recheck, parseBindings, parsePolicySet } from "@aegis/policy";
import { RecheckTally, exitCodeOfRecheck, loadPolicySet, needsEnvelope, tryParsePolicySet, matchedRuleId } from "@aegis/policy/internal";
import { checkRecordAgainst, exitCodeOfEnvelopeCheck, expire, isLoss } from "@aegis/envelope/internal";
import { type Unanswered } from "@aegis/mcp";
import { Gate, McpRecorder } from "@aegis/mcp/internal";
import type {
  CanonicalExpected,
  ChainExpected,
  CheckpointedExpected,
  DecisionInput,
  EnvelopeExpected,
  PolicyExpected,
  ProofExpected,
  RecheckExpected,
  RelayExpected,
  RelayTranscript,
  Vector,
  VectorKind,
} from "./manifest.js";

/** The bound on a vector's input file read whole (SPEC §18): far above any vector's. */
const MAX_VECTOR_FILE_BYTES = 64 * 1024 * 1024;

/**
 * `relative` under `dir`, or a bad_vectors fault: a manifest names files inside its own
 * directory, never `../../etc/passwd` or an absolute path.
 */
function inside(dir: string, relative: string, id: string): string {
  const full = resolve(dir, relative);
  const within = relativePath(resolve(dir), full);
  if (isAbsolute(relative) || within === "" || within.startsWith("..") || isAbsolute(within))
    throw new VectorsError({ code: "bad_vectors", path: join(dir, "manifest.json"), detail: `vector ${id} names ${relative}, outside the vectors directory` });
  return full;
}

async function readVectorFile(path: string): Promise<Buffer> {
  try {
    return await readInputFile(path, MAX_VECTOR_FILE_BYTES);
  } catch (error) {
    throw new VectorsError({ code: "bad_vectors", path, detail: describeIoError(error) });
  }
}

/** One vector's outcome: what was expected and what this implementation answered. */
export type VectorResult =
  { readonly id: string; readonly passed: true } | { readonly id: string; readonly passed: false; readonly expected: unknown; readonly actual: unknown };

/** Run one vector against this implementation. Input files are read relative to `dir`. */
export async function runVector(dir: string, vector: Vector): Promise<VectorResult> {
  const actual = await answerVector(await oracleInput(dir, vector));
  // Compared as the JSON a third party would compare: an absent member and an undefined one are the same.
  const answer = JSON.parse(JSON.stringify(actual)) as unknown;
  return isDeepStrictEqual(answer, vector.expected)
    ? { id: vector.id, passed: true }
    : { id: vector.id, passed: false, expected: vector.expected, actual: answer };
}

/** A manifest's vector, its files read or resolved under `dir`, as its kind's oracle takes it. */
async function oracleInput(dir: string, vector: Vector): Promise<OracleInput> {
  const at = (relative: string): string => inside(dir, relative, vector.id);
  const text = async (relative: string): Promise<string> => (await readVectorFile(at(relative))).toString("utf8");
  return match(vector)
    .returnType<Promise<OracleInput>>()
    .with({ kind: "canonical" }, async (v) => ({ kind: v.kind, row: await text(v.input.row) }))
    .with({ kind: "ed25519" }, async (v) => ({ kind: v.kind, case: JSON.parse(await text(v.input.case)) as Ed25519Case }))
    .with({ kind: "chain" }, (v) => Promise.resolve({ kind: v.kind, record: at(v.input.record), trust: v.input.trust }))
    .with({ kind: "envelope" }, (v) =>
      Promise.resolve({
        kind: v.kind,
        record: at(v.input.record),
        envelope: at(v.input.envelope),
        ...(v.input.expire_before === undefined ? {} : { expireBefore: v.input.expire_before }),
      }),
    )
    .with({ kind: "policy" }, async (v) => ({ kind: v.kind, policy: await text(v.input.policy), decisions: v.input.decisions }))
    .with({ kind: "recheck" }, (v) =>
      Promise.resolve({
        kind: v.kind,
        record: at(v.input.record),
        policy: at(v.input.policy),
        envelope: v.input.envelope === null ? null : at(v.input.envelope),
      }),
    )
    .with({ kind: "proof" }, async (v) => ({
      kind: v.kind,
      proof: await readVectorFile(at(v.input.proof)),
      keys: v.input.keys,
      witnesses: v.input.witnesses,
      minWitnesses: v.input.min_witnesses,
    }))
    .with({ kind: "checkpointed" }, async (v) => {
      const checkpoints: GivenCheckpoint[] = [];
      for (const relative of v.input.checkpoints) {
        const bytes = await readVectorFile(at(relative));
        checkpoints.push({ label: relative, bytes, stated: readCheckpointText(parseNote(bytes).text) });
      }
      return {
        kind: v.kind,
        record: at(v.input.record),
        checkpoints,
        trust: v.input.trust,
        witnesses: v.input.witnesses ?? null,
        minWitnesses: v.input.min_witnesses ?? 0,
      };
    })
    .with({ kind: "relay" }, async (v) => ({
      kind: v.kind,
      transcript: JSON.parse(await text(v.input.transcript)) as RelayTranscript,
      policy: v.input.policy === null ? null : await text(v.input.policy),
      bindings: v.input.bindings === null ? null : await text(v.input.bindings),
    }))
    .exhaustive(unmatched);
}

/**
 * What the oracle of each vector kind is given: its inputs read (a row's text, a case, a
 * proof's bytes) and its files named by paths the caller resolved. `aegis vectors` reads a
 * manifest's vector into one; the private generator builds one for each vector it writes, so
 * that a generated expectation and `aegis vectors` cannot disagree (SPEC §11.4).
 */
interface OracleInputs {
  readonly canonical: { readonly row: string };
  readonly ed25519: { readonly case: Ed25519Case };
  readonly chain: { readonly record: string; readonly trust: readonly string[] | null };
  /** `expireBefore`: a copy of the store is expired under `record` first (SPEC §14.12). */
  readonly envelope: { readonly record: string; readonly envelope: string; readonly expireBefore?: string };
  readonly policy: { readonly policy: string; readonly decisions: readonly DecisionInput[] };
  readonly recheck: { readonly record: string; readonly policy: string; readonly envelope: string | null };
  readonly proof: { readonly proof: Uint8Array; readonly keys: readonly string[]; readonly witnesses: readonly string[]; readonly minWitnesses: number };
  readonly checkpointed: {
    readonly record: string;
    readonly checkpoints: readonly GivenCheckpoint[];
    readonly trust: readonly string[] | null;
    /** Witness keys, vkeys; null: none given. */
    readonly witnesses: readonly string[] | null;
    readonly minWitnesses: number;
  };
  readonly relay: { readonly transcript: RelayTranscript; readonly policy: string | null; readonly bindings: string | null };
}

/** One kind's oracle input, tagged with its kind. */
type OracleInput<K extends VectorKind = VectorKind> = { readonly [P in K]: { readonly kind: P } & OracleInputs[P] }[K];

/** The answer of each kind, as a manifest states it under `expected`. */
type Answer<K extends VectorKind> = Extract<Vector, { readonly kind: K }>["expected"];

const ORACLES: { readonly [K in VectorKind]: (input: OracleInput<K>) => Answer<K> | Promise<Answer<K>> } = {
  canonical: (i) => canonicalAnswer(i.row),
  ed25519: (i) => ed25519Answer(i.case),
  chain: (i) => chainAnswer(i.record, i.trust),
  envelope: (i) => envelopeAnswer(i.record, i.envelope, i.expireBefore),
  policy: (i) => policyAnswer(i.policy, i.decisions),
  recheck: (i) => recheckAnswer(i.record, i.policy, i.envelope),
  proof: (i) => proofAnswer(i.proof, i.keys, i.witnesses, i.minWitnesses),
  checkpointed: (i) => checkpointedAnswer(i.record, i.checkpoints, i.trust, i.witnesses, i.minWitnesses),
  relay: (i) => relayAnswer(i.transcript, i.policy, i.bindings),
};

/**
 * This implementation's answer to one vector (SPEC §11.4): what `aegis vectors` compares with
 * the manifest's `expected`, and what the generator writes there.
 */
export async function answerVector<K extends VectorKind>(input: OracleInput<K>): Promise<Answer<K>> {
  const oracle: (input: OracleInput<K>) => Answer<K> | Promise<Answer<K>> = ORACLES[input.kind];
  return oracle(input);
}

/** SPEC §3: parse strictly, then the canonical form and its SHA-256, or why there is none. */
function canonicalAnswer(row: string): CanonicalExpected {
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

/** One strict-verification case of the `ed25519` vectors: hex of the key, the message and the signature. */
export interface Ed25519Case {
  readonly public_key: string;
  readonly message: string;
  readonly signature: string;
}

/** SPEC §8.5: the strict rule's answer. A key or signature of the wrong length is refused. */
function ed25519Answer(c: Ed25519Case): { readonly valid: boolean } {
  const key = verifyingKey(Buffer.from(c.public_key, "hex"));
  if (typeof key === "string") return { valid: false };
  return { valid: verifyStrict(key, Buffer.from(c.message, "hex"), Buffer.from(c.signature, "hex")) };
}

/** SPEC §8: the verifier's whole answer, as a record's reader sees it, with the CLI's exit code. */
async function chainAnswer(path: string, trust: readonly string[] | null): Promise<ChainExpected> {
  return chainExpected(await verifyRecord({ path }, trust === null ? {} : { trust }));
}

/** A verification as the `chain` vectors state it (SPEC §11.4). */
function chainExpected(result: Verification): ChainExpected {
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
    unfinished_calls: result.unfinished_calls,
    exit_code: exitCodeOfVerdict(result.verdict),
  };
}

/** SPEC §19.3: check one proof offline under `keys`, counting the `witnesses`' cosignatures. */
function proofAnswer(bytes: Uint8Array, keys: readonly string[], witnesses: readonly string[], minWitnesses: number): ProofExpected {
  const check = checkProof(
    bytes,
    keys.map((k) => Buffer.from(k, "hex")),
    witnesses.map((w) => parseVerifierKey(w)),
  );
  if (check.code !== "included") {
    const result = check.code === "checkpoint_refused" ? `checkpoint_refused:${check.opening.code}` : check.code;
    return { result, index: null, size: null, line_signature: null, cosigned: [] };
  }
  const cosigned = check.cosigned.map((c) => c.witness.name);
  return {
    result: cosigned.length < minWitnesses ? "too_few_witnesses" : "included",
    index: check.proof.index,
    size: check.checkpoint.size,
    line_signature: check.lineSignature,
    cosigned,
  };
}

/** SPEC §19.4: the verifier's answer on `record` held to `checkpoints`. */
async function checkpointedAnswer(
  record: string,
  checkpoints: readonly GivenCheckpoint[],
  trust: readonly string[] | null,
  witnesses: readonly string[] | null,
  minWitnesses: number,
): Promise<CheckpointedExpected> {
  const options = {
    ...(trust === null ? {} : { trust }),
    ...(witnesses === null ? {} : { witnesses: witnesses.map((w) => parseVerifierKey(w)), minWitnesses }),
  };
  const { verification: result, findings } = await verifyWithCheckpoints(record, checkpoints, options);
  return {
    ...chainExpected(result),
    findings: findings.map((f) => f.code),
    anchored: result.anchored === undefined ? null : { size: result.anchored.size, in_flight: result.anchored.in_flight },
    ...(witnesses === null ? {} : { cosigned: findings.map((f) => f.cosigned ?? []) }),
  };
}

/**
 * SPEC §9, §14: what the Envelope answers for every digest the record names, and the damage it
 * reported. With `expireBefore`, a copy of the store is first expired under the record (§14.12).
 */
async function envelopeAnswer(record: string, envelope: string, expireBefore?: string): Promise<EnvelopeExpected> {
  if (expireBefore === undefined) return answerOf(record, envelope);
  const dir = await mkdtemp(join(tmpdir(), "aegis-vector-expiry-"));
  try {
    const copy = join(dir, "store");
    await cp(envelope, copy, { recursive: true });
    const done = await expire([record], expireBefore, { code: "redact", open: () => EnvelopeStore.open(copy, { create: false }) }, () => Promise.resolve());
    if (!done.ok) {
      const refusal = done.refusal;
      if (refusal.code === "bad_before") throw new VectorsError({ code: "bad_vectors", path: envelope, detail: `expire_before: ${refusal.detail}` });
      throw new VectorsError(refusal);
    }
    return await answerOf(record, copy);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function answerOf(record: string, envelope: string): Promise<EnvelopeExpected> {
  const source = await openEnvelope(envelope);
  try {
    const digests: EnvelopeExpected["digests"][number][] = [];
    const tally = await checkRecordAgainst(
      record,
      source,
      ({ reference, read }) => void digests.push({ digest: reference.digest, status: read.code, ...(read.code === "redacted" ? { reason: read.reason } : {}) }),
    );
    const exit_code = exitCodeOfEnvelopeCheck({ mismatched: tally.digest_mismatch, lost: source.damage.filter(isLoss).length });
    return { digests, damage: source.damage.map((d) => d.code), exit_code };
  } finally {
    await source.close();
  }
}

/**
 * SPEC §15: the set's validity and problems, or its hash, whether it needs the Envelope, and
 * `decide`'s verdict and rule for each call, in order, with fresh rate windows on a clock
 * that stands still.
 */
function policyAnswer(text: string, calls: readonly DecisionInput[]): PolicyExpected {
  const parsed = tryParsePolicySet(text);
  if (!parsed.ok) return { result: "invalid", problems: parsed.problems.map((p) => ({ code: p.code, path: "path" in p ? p.path : null })) };
  const set = parsed.set;
  const live = { windows: new RateWindows(), now: () => 0, mintApprovalId: () => "apr-vector" };
  const decisions = calls.map((call) => {
    const d = decide(
      set,
      {
        tool_id: call.tool_id,
        ...(call.axes === undefined ? {} : { axes: call.axes }),
        ...(call.request === undefined ? {} : { request: new TextEncoder().encode(call.request) }),
      },
      live,
    );
    return { verdict: d.code, rule: matchedRuleId(d.matched) ?? null };
  });
  return { result: "valid", policy_set_hash: set.hash, needs_envelope: needsEnvelope(set), decisions };
}

/** SPEC §16: the report lines and the exit code of `aegis recheck` (a file with nothing to recheck is 1). */
async function recheckAnswer(record: string, policyPath: string, envelopePath: string | null): Promise<RecheckExpected> {
  const policy = await loadPolicySet(policyPath);
  const source = envelopePath === null ? undefined : await openEnvelope(envelopePath);
  try {
    const tally = new RecheckTally();
    const lines: string[] = [];
    const reasons: RecheckExpected["reasons"][number][] = [];
    for await (const verdict of recheck(record, { code: "policy", policy }, source === undefined ? {} : { envelope: (d) => source.get(d) })) {
      tally.add(verdict);
      lines.push(describeRecheckLine(verdict));
      reasons.push(verdict.code === "indeterminate" ? verdict.reason : null);
    }
    return { lines, reasons, exit_code: exitCodeOfRecheck(tally.conclusion) };
  } finally {
    await source?.close();
  }
}

/** The relay vectors' key: any key gives the same answer, since signatures are not compared. */
const RELAY_KEY = SigningKey.fromSeed(new Uint8Array(32).fill(0x11));
/** What depends on the key or the clock, and so is not compared (SPEC §17). */
const UNCOMPARED = new Set(["prev_hash", "key_id", "signature", "public_key", "wall_ms", "time"]);

/**
 * SPEC §17: replay a transcript through the recorder, with a real writer, on a clock that
 * stands still and with approval ids `apr-vector-<n>`; bound paths are not looked up on the
 * disk. The answer is what happened to each client frame and every Line written.
 */
async function relayAnswer(transcript: RelayTranscript, policy: string | null, bindings: string | null): Promise<RelayExpected> {
  const dir = await mkdtemp(join(tmpdir(), "aegis-relay-vector-"));
  try {
    const path = join(dir, "record.aarl");
    const writer = await RecordWriter.open(path, { key: RELAY_KEY, clock: false });
    let parks = 0;
    const gate =
      policy === null
        ? undefined
        : new Gate({
            policy: parsePolicySet(policy),
            ...(bindings === null ? {} : { bindings: parseBindings(bindings) }),
            ...(transcript.role === null ? {} : { role: transcript.role }),
            ...(transcript.session === null ? {} : { session: transcript.session }),
            followSymlinks: false,
            now: () => 0,
            mintApprovalId: () => `apr-vector-${++parks}`,
          });
    const recorder = new McpRecorder({
      writer,
      ...(gate === undefined ? {} : { gate }),
      ...(transcript.refusal === undefined ? {} : { refusal: transcript.refusal }),
      clock: () => 0,
    });
    const steps: RelayExpected["steps"][number][] = [];
    let ended: Unanswered = { code: "child_exited" };
    for (const [event, e] of transcript.events.entries()) {
      if ("client" in e || "client_hex" in e) {
        const bytes = "client" in e ? Buffer.from(e.client, "utf8") : Buffer.from(e.client_hex, "hex");
        const v = await recorder.admit(bytes);
        const answer = v.code === "answer" ? v.frame : v.code === "failed" ? v.frame : undefined;
        steps.push({ event, verdict: v.code, answer: answer === undefined ? null : answer.toString("utf8") });
      } else if ("server" in e || "server_hex" in e) {
        const bytes = "server" in e ? Buffer.from(e.server, "utf8") : Buffer.from(e.server_hex, "hex");
        steps.push({ event, relayed: recorder.observe(bytes) });
      } else if ("approve" in e || "deny" in e) {
        const r =
          "approve" in e ? await recorder.answerPark(e.approve, { code: "approve" }) : await recorder.answerPark(e.deny, { code: "deny", reason: e.reason });
        steps.push({ event, taken: r.ok, refusal: r.ok ? null : r.refusal.code });
      } else if ("record_fails" in e) await writer.close();
      else {
        ended = endOf(e);
      }
    }
    await recorder.finish(ended);
    await writer.close().catch(() => undefined);
    const lines = (await readFile(path, "utf8"))
      .split("\n")
      .filter((row) => row.trim() !== "")
      .map((row) => Object.fromEntries(Object.entries(JSON.parse(row) as Record<string, unknown>).filter(([k]) => !UNCOMPARED.has(k))));
    return { steps, lines };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function endOf(e: Extract<RelayTranscript["events"][number], { end: string }>): Unanswered {
  return match(e)
    .with({ end: "signalled" }, (x) => ({ code: "signalled" as const, signal: x.signal }))
    .with({ end: "child_exited" }, { end: "grace_expired" }, { end: "transport_closed" }, (x) => ({ code: x.end }))
    .exhaustive(unmatched);
}
