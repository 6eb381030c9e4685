import { spawnSync } from "node:child_process";
import { openEnvelope } from "@aegis/envelope";
import { RequestDigest, ResponseDigest } from "@aegis/format";
import { expect } from "vitest";
import { BIN, KEY, linesOf, type Line } from "./support.js";

/** The real CLI, run to its end. */
export function cli(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, AEGIS_DEBUG: "" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * What every end-to-end record must be: Verified, pinned to the key; every call with its
 * intent and its outcome; the Envelope holding every request and response the record names.
 * Returns the outcomes, in file order.
 */
export async function wholeRecord(audit: string, envelope: string): Promise<Line[]> {
  const verify = cli(["verify", "--key", KEY.publicKeyHex, audit]);
  expect(verify.stdout.split("\n")[0], verify.stdout + verify.stderr).toMatch(/^Verified \(pinned to [0-9a-f]+\)$/);
  expect(verify.status).toBe(0);
  const lines = linesOf(audit);
  const intents = lines.filter((l) => l.line_type === "intent").map((l) => String(l["call_id"]));
  const outcomes = lines.filter((l) => l.line_type === "outcome");
  expect(outcomes.map((l) => String(l["call_id"])).sort()).toEqual([...intents].sort());
  const store = await openEnvelope(envelope);
  try {
    for (const o of outcomes) {
      expect((await store.get(RequestDigest.parse(String(o["request_digest"])))).code, `request of ${String(o["call_id"])}`).toBe("present");
      if (o["response_digest"] !== undefined) {
        expect((await store.get(ResponseDigest.parse(String(o["response_digest"])))).code, `response of ${String(o["call_id"])}`).toBe("present");
      }
    }
  } finally {
    await store.close();
  }
  return outcomes;
}

/** The request and response of a call, as the Envelope holds them, parsed. */
export async function bytesOf(envelope: string, outcome: Line): Promise<{ request: unknown; response: unknown }> {
  const store = await openEnvelope(envelope);
  try {
    const request = await store.get(RequestDigest.parse(String(outcome["request_digest"])));
    const response = outcome["response_digest"] === undefined ? undefined : await store.get(ResponseDigest.parse(String(outcome["response_digest"])));
    if (request.code !== "present") throw new Error("the Envelope lacks the request");
    return {
      request: JSON.parse(Buffer.from(request.bytes).toString("utf8")),
      response: response?.code === "present" ? JSON.parse(Buffer.from(response.bytes).toString("utf8")) : undefined,
    };
  } finally {
    await store.close();
  }
}

/** Policy status of each outcome, with its tool: what a test of enforcement compares. */
export function decided(outcomes: readonly Line[]): [string, string][] {
  return outcomes.map((o) => [String(o["tool_id"]), (o["policy"] as { status: string }).status]);
}
