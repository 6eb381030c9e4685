import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordWriter } from "@aegis/format";
import { RECORDED_REASON, insecureDevKey } from "@aegis/format/internal";
import { EnvelopeStore } from "@aegis/envelope";
import { RateWindows, decide, type CallAxes, type PolicySet } from "@aegis/policy";

/** A call of a scripted Session: what the agent asked, with the bytes it sent and got back. */
export interface ScriptedCall {
  readonly id: string;
  readonly tool: string;
  readonly axes?: CallAxes;
  readonly request: string;
  readonly response?: string;
  /** When the call's Lines say it ran (SPEC §13.7); a Session whose calls give none has Lines with no time. */
  readonly at?: string;
}

/** Fixed so that a store, a tombstone and a pack come out byte for byte the same every run. */
const STORE_ID = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
export const PACK_ID = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i);
export const REDACTED_AT = new Date("2026-01-02T03:04:05.000Z");

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/**
 * Write a Session as a runtime would (SPEC §15.5): each call decided by `policy` through
 * `decide`, its request kept in the Envelope before the intent, its outcome recording what
 * `decide` returned. Returns the record's bytes; the store stays in `dir/store`.
 */
export async function writeScenario(dir: string, policy: PolicySet, calls: readonly ScriptedCall[]): Promise<string> {
  const record = join(dir, "session.aarl");
  const envelope = await EnvelopeStore.open(join(dir, "store"), { id: STORE_ID, now: () => REDACTED_AT });
  const live = { windows: new RateWindows(), now: () => 0, mintApprovalId: () => "apr-vector" };
  try {
    // Timed calls: each Line carries its call's time (the open the first call's, the close the last's).
    let now = calls.find((c) => c.at !== undefined)?.at;
    const clock = now === undefined ? false : () => new Date(now ?? 0);
    const writer = await RecordWriter.open(record, { key: insecureDevKey(), allowInsecureDevKey: true, envelope, clock });
    for (const call of calls) {
      now = call.at ?? now;
      const request = bytes(call.request);
      const d = decide(policy, { tool_id: call.tool, ...(call.axes === undefined ? {} : { axes: call.axes }), request }, live);
      await writer.beginCall({ call_id: call.id, tool_id: call.tool, policy_set_hash: d.policy_set_hash, request });
      const ran = d.code === "allowed";
      const result = {
        policy: d.policy,
        capability: { status: "denied" as const, reason: RECORDED_REASON.notEvaluated },
        execution: ran ? { status: "success" as const } : { status: "host_denied" as const, reason: RECORDED_REASON.notExecuted },
        decision_axes: d.decision_axes,
      };
      await writer.endCall(call.id, ran && call.response !== undefined ? { ...result, response: bytes(call.response) } : result);
    }
    await writer.close();
  } finally {
    await envelope.close();
  }
  return readFile(record, "utf8");
}

/** Run `body` in a fresh temporary directory, removed afterwards. */
export async function inTemp<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "aegis-vectors-"));
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every file of a store directory, by name, sorted. */
export async function storeFiles(store: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const name of (await readdir(store)).sort()) files.set(name, await readFile(join(store, name)));
  return files;
}
