import { parsePolicySet } from "@aegis/policy";
import { describe, expect, it } from "vitest";
import { Gate } from "../src/internal.js";
import { call, frame, linesOf, outcomes, result, verdictOf } from "./support.js";
import { answerOf, refusalOf, session } from "./recorder-support.js";

const POLICY = parsePolicySet(`version: 2
default: deny
rules:
  - id: echo
    action: allow
    tool: echo
  - id: park-write
    action: pending_approval
    tool: write_note
    reason: a human looks at every write
  - id: limited
    action: rate_limit
    tool: ping_tool
    rate: { max: 1, per_seconds: 3600 }
`);

describe("what a hostile or careless peer sends (review findings)", () => {
  it("[M17.1] [M17.7] refuses a frame with a carriage return inside it, in every mode: a server reading lines could take it for two messages", async () => {
    const s = await session();
    const sneaky = Buffer.concat([frame({ jsonrpc: "2.0", id: 1, method: "ping" }), Buffer.from("\r"), call(3, "delete_everything")]);
    expect(answerOf(await s.recorder.admit(sneaky))).toMatchObject({
      id: null,
      error: { code: -32042, data: { aegis: { code: "UNREADABLE_FRAME", layer: "wrap" } } },
    });
    // A \r at the very end is CRLF framing, and is kept.
    expect(await s.recorder.admit(Buffer.concat([call(4, "echo"), Buffer.from("\r")]))).toEqual({ code: "forward" });
    await s.close();
    expect(outcomes(s.path).map((o) => o["tool_id"])).toEqual(["<unreadable-frame>", "echo"]);
  });

  it("under a Policy Set, refuses a frame that is not JSON: what wrap cannot read does not reach the server", async () => {
    const s = await session({ gate: new Gate({ policy: POLICY }) });
    expect(answerOf(await s.recorder.admit(Buffer.from("{not json")))).toMatchObject({ error: { data: { aegis: { code: "UNREADABLE_FRAME" } } } });
    await s.close();
  });

  it("refuses an id nested past the bound from either side, and neither side can stop the relay with one", async () => {
    const s = await session();
    const deep = (n: number) => `${"[".repeat(n)}1${"]".repeat(n)}`;
    const fromClient = Buffer.from(`{"jsonrpc":"2.0","id":${deep(200_000)},"method":"tools/call","params":{"name":"echo"}}`);
    expect(answerOf(await s.recorder.admit(fromClient))).toMatchObject({ id: null, error: { data: { aegis: { code: "UNREADABLE_FRAME" } } } });
    await s.recorder.admit(call(1, "echo"));
    expect(s.recorder.observe(Buffer.from(`{"jsonrpc":"2.0","id":${deep(200_000)},"result":{}}`))).toBe(false);
    expect(s.recorder.observe(result(1))).toBe(true);
    await s.close();
    expect(s.recorder.failed).toBeUndefined();
    expect(outcomes(s.path).map((o) => [o["tool_id"], (o["execution"] as { status: string }).status])).toEqual(
      expect.arrayContaining([
        ["<unreadable-frame>", "host_denied"],
        ["<dropped-answer>", "host_denied"],
        ["echo", "success"],
      ]),
    );
    expect(outcomes(s.path)).toHaveLength(3);
  });

  it("refuses a request of any kind that reuses a call's id in flight, and a call that reuses a request's", async () => {
    const s = await session();
    await s.recorder.admit(call(7, "never"));
    expect(answerOf(await s.recorder.admit(frame({ jsonrpc: "2.0", id: 7, method: "ping" })))).toMatchObject({
      id: 7,
      error: { data: { aegis: { code: "DUPLICATE_REQUEST_ID" } } },
    });
    expect(await s.recorder.admit(frame({ jsonrpc: "2.0", id: 8, method: "ping" }))).toEqual({ code: "forward" });
    // A request that is not a call is answered with an error; a call, with a tool result.
    const reused = answerOf(await s.recorder.admit(call(8, "echo")));
    expect(reused).toMatchObject({ id: 8, result: { isError: true } });
    expect(refusalOf(reused)).toMatchObject({ code: "DUPLICATE_REQUEST_ID" });
    // A batch holding a call is refused whole, whatever its ids: each request in it is answered.
    expect(answerOf(await s.recorder.admit(frame([{ jsonrpc: "2.0", id: 9, method: "ping" }, JSON.parse(call(9, "echo").toString())])))).toHaveLength(2);
    s.recorder.observe(result(8, {}));
    expect(await s.recorder.admit(call(8, "echo"))).toEqual({ code: "forward" });
    await s.close();
    const never = outcomes(s.path).find((o) => o["tool_id"] === "never");
    expect(never?.["execution"]).toEqual({ status: "host_denied", reason: "child exited before responding" });
  });

  it("records one answer to a park when two race, and lets one retry through", async () => {
    const gate = new Gate({ policy: POLICY });
    const s = await session({ gate });
    const id = String(refusalOf(answerOf(await s.recorder.admit(call(1, "write_note", { path: "/a" }))))["approval_id"]);
    const answers = await Promise.all([
      s.recorder.answerPark(id, { code: "approve" }),
      s.recorder.answerPark(id, { code: "approve" }),
      s.recorder.answerPark(id, { code: "deny", reason: "no" }),
    ]);
    expect(answers.map((a) => a.ok)).toEqual([true, false, false]);
    expect((await s.recorder.admit(call(2, "write_note", { path: "/a" }))).code).toBe("forward");
    expect((await s.recorder.admit(call(3, "write_note", { path: "/a" }))).code).toBe("answer");
    await s.close();
    expect(linesOf(s.path).filter((l) => l.line_type === "decision")).toHaveLength(1);
    expect(await verdictOf(s.path)).toBe("verified");
  });

  it("lets through, under an approval, only a retry of the very call approved", async () => {
    const gate = new Gate({ policy: POLICY });
    const s = await session({ gate });
    const parked = refusalOf(answerOf(await s.recorder.admit(call(1, "write_note", { path: "notes.txt" }))));
    await s.recorder.answerPark(String(parked["approval_id"]), { code: "approve" });
    expect(refusalOf(answerOf(await s.recorder.admit(call(2, "write_note", { path: "/etc/shadow" }))))).toMatchObject({ code: "PENDING_APPROVAL" });
    expect(await s.recorder.admit(call(3, "write_note", { path: "notes.txt" }))).toEqual({ code: "forward" });
    await s.close();
  });
});
