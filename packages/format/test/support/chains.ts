import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordWriter, PolicySetHash, RequestDigest, type OutcomePayload, type SigningKey } from "../../src/index.js";
import { resealLines, type ResealOptions, insecureDevKey } from "../../src/internal.js";

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
  // No time member: sessions written twice must be the same bytes.
  const writer = await RecordWriter.open(path, { key: options.key ?? DEV, allowInsecureDevKey: true, clock: false });
  for (let i = 0; i < (options.calls ?? 2); i++) {
    const id = `call-${i}`;
    await writer.intent({ call_id: id, tool_id: "fs.read", request_digest: RequestDigest.of(Buffer.from(`request ${id}`)), policy_set_hash: POLICY });
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

/** {@link resealLines} with the development key unless told otherwise. */
export function reseal(lines: readonly Line[], options: Partial<ResealOptions> = {}): string {
  return resealLines(lines, { ...options, key: options.key ?? DEV });
}
