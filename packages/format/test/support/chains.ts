import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ChainWriter,
  PolicySetHash,
  PrevHash,
  RequestDigest,
  insecureDevKey,
  sealLine,
  type OutcomePayload,
  type SigningKey,
} from "../../src/index.js";

export const DEV = insecureDevKey();
export const POLICY = PolicySetHash.of("test-policy-set");

export function tempDir(prefix = "aegis-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function outcome(callId: string, tool = "fs.read"): OutcomePayload {
  return {
    call_id: callId,
    tool_id: tool,
    request_digest: RequestDigest.of(Buffer.from(`request ${callId}`)),
    policy_set_hash: POLICY,
    policy: { status: "allowed" },
    capability: { status: "denied", reason: "not evaluated" },
    execution: { status: "success" },
    decision_axes: { capability: "fs.read", role: "ops", matched_rule: "allow-read" },
  };
}

/**
 * A closed Session written by the real writer: open, then per call an intent and an
 * outcome, then a park and its decision, then close. Returns the file's path.
 */
export async function writeSession(path: string, options: { key?: SigningKey; calls?: number } = {}): Promise<string> {
  const writer = await ChainWriter.open(path, { key: options.key ?? DEV, allowInsecureDevKey: true });
  for (let i = 0; i < (options.calls ?? 2); i++) {
    const id = `call-${i}`;
    await writer.intent({ call_id: id, tool_id: "fs.read", request_digest: RequestDigest.of(Buffer.from(`request ${id}`)) });
    await writer.outcome(outcome(id));
  }
  await writer.outcome({ ...outcome("call-park", "net.post"), policy: { status: "pending_approval", approval_id: "apr-1" } });
  await writer.decision({ approval_id: "apr-1", verdict: { verdict: "denied", reason: "not today" } });
  await writer.close();
  return path;
}

export type Line = Record<string, unknown>;

export function readLines(path: string): Line[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Line);
}

const SIGNED = new Set(["open", "outcome", "decision", "close", "checkpoint"]);

/**
 * Re-seal edited Lines as an emitter holding `key` would: with `chain`, recompute every
 * `prev_hash` (and each `open`'s `prev_session_tail`); sign the signed types and any Line
 * that carries a `signature`. This is how tests build files that are wrong in exactly
 * one way while everything else about them is valid.
 */
export function reseal(
  lines: readonly Line[],
  options: {
    key?: SigningKey;
    chain?: boolean;
    /** Indices of Lines to leave unsigned, whatever their type. */
    unsigned?: readonly number[];
    /** Indices of Lines to sign with another key. */
    signWith?: ReadonlyMap<number, SigningKey>;
  } = {},
): string {
  let tail: string | undefined;
  let out = "";
  for (const [index, original] of lines.entries()) {
    const key = options.signWith?.get(index) ?? options.key ?? DEV;
    const line: Line = { ...original };
    if (options.unsigned?.includes(index) === true) {
      delete line["signature"];
      delete line["key_id"];
    }
    const type = line["line_type"];
    if (options.chain !== false) {
      if (type === "open") {
        line["prev_hash"] = PrevHash.GENESIS;
        if (tail !== undefined) line["prev_session_tail"] = tail;
      } else if (tail !== undefined) {
        line["prev_hash"] = tail;
      }
    }
    const sign =
      options.unsigned?.includes(index) !== true && ((typeof type === "string" && SIGNED.has(type)) || "signature" in line);
    if (type === "open" && sign) line["public_key"] = Buffer.from(key.publicKey).toString("hex");
    const sealed = sealLine(line, sign ? key : undefined);
    out += `${sealed.text}\n`;
    tail = sealed.lineHash;
  }
  return out;
}
