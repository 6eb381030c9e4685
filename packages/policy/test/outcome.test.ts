import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RecordWriter, SigningKey, verifyRecord } from "@aegis/format";
import { type OutcomeLine } from "@aegis/format/internal";
import { describe, expect, it } from "vitest";
import { RateWindows, callOpening, decide, outcomeOf, recheck, trapOf, type Decision, type RecheckVerdict } from "../src/index.js";
import { type DecidedCall } from "../src/outcome.js";
import { policy } from "./support/policies.js";
import { tempDir } from "./support/records.js";

const SET = policy(
  "version: 2",
  "default: deny",
  "rules:",
  "  - {id: read, action: allow, tool: fs.read, limits: {max_wall_ms: 5000, max_output_bytes: 65536}}",
  "  - {id: shell, action: pending_approval, tool: shell.exec}",
  "  - {id: fetch, action: rate_limit, tool: net.fetch, rate: {max: 1, per_seconds: 60}}",
);

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const call = (call_id: string, tool_id: string): DecidedCall => ({ call_id, tool_id, request: bytes(JSON.stringify({ call_id, tool_id })) });

/** What an integrator writes per call: decide, then record through the helpers. */
async function runtimeCall(writer: RecordWriter, windows: RateWindows, c: DecidedCall, tool: () => Promise<string>): Promise<Decision> {
  const decision = decide(SET, { ...c, axes: { role: "agent" } }, { windows });
  const start = callOpening(decision, c);
  if (decision.code !== "allowed") {
    await writer.recordUnrun(start, outcomeOf(decision, c));
    return decision;
  }
  await writer.beginCall(start);
  try {
    const response = await tool();
    await writer.endCall(c.call_id, outcomeOf(decision, c, { response: bytes(response), wall_ms: 3 }));
  } catch (error) {
    await writer.endCall(c.call_id, outcomeOf(decision, c, { execution: trapOf(error) }));
  }
  return decision;
}

function outcomes(path: string): Map<string, OutcomeLine> {
  const rows = readFileSync(path, "utf8").trimEnd().split("\n");
  const lines = rows.map((row) => JSON.parse(row) as { line_type: string } & OutcomeLine);
  return new Map(lines.filter((l) => l.line_type === "outcome").map((l) => [l.call_id, l]));
}

describe("recording a decided call through callOpening and outcomeOf (SPEC §5.3, §13.2)", () => {
  it("writes a record that verifies and rechecks unchanged under the set that decided it", async () => {
    const path = join(tempDir(), "runtime.aarl");
    const key = SigningKey.generate();
    const writer = await RecordWriter.open(path, { key });
    const windows = new RateWindows();
    const codes: string[] = [];
    for (const [c, tool] of [
      [call("c1", "fs.read"), async () => '{"text":"hello"}'],
      [call("c2", "fs.write"), async () => "never runs"],
      [call("c3", "shell.exec"), async () => "never runs"],
      [call("c4", "net.fetch"), async () => "{}"],
      [call("c5", "net.fetch"), async () => "never runs"],
      [
        call("c6", "fs.read"),
        async () => {
          throw new Error("disk on fire");
        },
      ],
    ] as const) {
      codes.push((await runtimeCall(writer, windows, c, tool)).code);
    }
    await writer.close();
    expect(codes).toEqual(["allowed", "denied", "pending_approval", "allowed", "rate_limited", "allowed"]);

    const verified = await verifyRecord({ path }, { trust: [key.publicKeyHex] });
    expect(verified.verdict).toEqual({ status: "verified" });

    const verdicts: RecheckVerdict[] = [];
    for await (const v of recheck(path, { code: "policy", policy: SET })) verdicts.push(v);
    // The rate-limited pair cannot be re-counted without the windows (SPEC §16.3); every
    // other call decides the same under the set that wrote it.
    expect(verdicts.map((v) => [v.call_id, v.code])).toEqual([
      ["c1", "unchanged"],
      ["c2", "unchanged"],
      ["c3", "unchanged"],
      ["c4", "indeterminate"],
      ["c5", "indeterminate"],
      ["c6", "unchanged"],
    ]);

    const lines = outcomes(path);
    expect(lines.get("c1")).toMatchObject({
      policy: { status: "allowed" },
      capability: { status: "granted", grant: { grant_id: "grant-c1", tool_id: "fs.read", max_memory_bytes: 0, max_wall_ms: 5000, max_output_bytes: 65536 } },
      grant_id: "grant-c1",
      execution: { status: "success" },
      wall_ms: 3,
      decision_axes: { role: "agent", matched_rule: "read" },
    });
    expect(lines.get("c1")?.response_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(lines.get("c2")).toMatchObject({
      policy: { status: "denied", reason: "no matching rule (default deny)" },
      capability: { status: "denied", reason: "policy blocked before capability" },
      execution: { status: "host_denied", reason: "not executed" },
    });
    expect(lines.get("c3")?.policy).toMatchObject({ status: "pending_approval" });
    expect(lines.get("c6")?.execution).toEqual({ status: "trap", message: "disk on fire" });
  });

  it("takes the grant's authority and ceilings from the runtime over the rule's limits", () => {
    const c = call("g1", "fs.read");
    const decision = decide(SET, c);
    const result = outcomeOf(decision, c, { grant: { grant_id: "sandbox-7", fs: { read_paths: ["/w"], write_paths: [] }, max_wall_ms: 100 } });
    expect(result.capability).toEqual({
      status: "granted",
      grant: {
        grant_id: "sandbox-7",
        tool_id: "fs.read",
        fs: { read_paths: ["/w"], write_paths: [] },
        max_memory_bytes: 0,
        max_wall_ms: 100,
        max_output_bytes: 65536,
      },
    });
    expect(result.grant_id).toBe("sandbox-7");
  });

  it("refuses a response for a call the decision refused: it never ran", () => {
    const c = call("r1", "fs.write");
    expect(() => outcomeOf(decide(SET, c), c, { response: bytes("{}") })).toThrow(/r1 was denied, so it never ran/);
  });

  it("refuses a rule limit a record cannot hold, naming it", () => {
    const huge = policy("version: 2", "default: deny", "rules:", "  - {id: big, action: allow, tool: t, limits: {max_memory_bytes: 18446744073709551615}}");
    const c = call("h1", "t");
    expect(() => outcomeOf(decide(huge, c), c)).toThrow(/max_memory_bytes \(18446744073709551615\) is beyond 2\^53 - 1/);
    expect(outcomeOf(decide(huge, c), c, { grant: { max_memory_bytes: 1 } }).capability).toMatchObject({ grant: { max_memory_bytes: 1 } });
  });
});
