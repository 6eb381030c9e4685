import { afterAll, describe, expect, it } from "vitest";
import { RequestDigest, type Verification } from "../src/index.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { verifyChainBytesParallel } from "./support/tuned.js";
import { MAX_WAITING_CALLS, MAX_WAITING_CHARS, UnfinishedCallTally } from "../src/verify/unfinished-calls.js";
import { sharedPool } from "../src/verify/signature-pool.js";
import { outcome, reseal, type Line } from "./support/chains.js";

/**
 * SPEC §13.4 `unfinished_calls`: an `intent` whose Session ended (a later `open`, or its own
 * `close` at the end of the file) with no `outcome` for it. Records are built Line by Line,
 * as a writer killed between an intent and its outcome leaves them.
 */

const open = (): Line => ({ schema_version: 2, line_type: "open", prev_hash: "" });
const intent = (id: string): Line => ({
  schema_version: 2,
  line_type: "intent",
  prev_hash: "",
  call_id: id,
  tool_id: "fs.read",
  request_digest: RequestDigest.of(Buffer.from(`request ${id}`)),
});
const done = (id: string): Line => ({ schema_version: 2, line_type: "outcome", prev_hash: "", ...outcome(id) });
const close = (): Line => ({ schema_version: 2, line_type: "close", prev_hash: "" });

/** Sessions, each a list of Lines after its `open`, numbered as a writer numbers them. */
function record(...sessions: readonly (readonly Line[])[]): string {
  return reseal(sessions.flatMap((lines) => [open(), ...lines].map((l, seq) => ({ ...l, seq }))));
}

const ALL_ON_THREADS = { inline: 0, inlineWhenRunning: 0, eager: true, batch: 2, windowPerThread: 2 } as const;

afterAll(async () => {
  await sharedPool(2).close();
});

describe("calls an ended Session left unfinished (SPEC §13.4)", () => {
  it("a Session killed after an intent, then a new Session closed: Verified, and the call counted", () => {
    const v = verifyChainBytes(record([intent("call-0"), done("call-0"), intent("call-1")], [intent("call-0"), done("call-0"), close()]));
    expect(v.verdict).toEqual({ status: "verified" });
    expect(v.unfinished_calls).toEqual({ count: 1, calls: [{ session_index: 0, call_id: "call-1" }] });
  });

  it("an intent a later signature covers still counts: unfinished is not in flight", () => {
    // call-1's intent, then call-0's signed outcome, then the writer died: in_flight was
    // emptied by that signature, but call-1 never got its outcome.
    const v = verifyChainBytes(record([intent("call-0"), intent("call-1"), done("call-0")], [close()]));
    expect(v.verdict).toEqual({ status: "verified" });
    expect(v.unfinished_calls).toEqual({ count: 1, calls: [{ session_index: 0, call_id: "call-1" }] });
  });

  it("the last Session, with no close, is not counted: its calls may still run, and unanchored_tail names its tail", () => {
    const v = verifyChainBytes(record([intent("call-0"), done("call-0")], [intent("call-7"), done("call-8"), intent("call-9")]));
    expect(v.verdict).toEqual({ status: "indeterminate", reason: { code: "unanchored_tail", session_index: 1, in_flight: ["call-9"] } });
    expect(v.unfinished_calls).toEqual({ count: 0, calls: [] });
  });

  it("a last Session that closed has ended: an intent in it with no outcome is counted", () => {
    const v = verifyChainBytes(record([intent("call-0"), intent("call-1"), done("call-0"), close()]));
    expect(v.verdict).toEqual({ status: "verified" });
    expect(v.unfinished_calls).toEqual({ count: 1, calls: [{ session_index: 0, call_id: "call-1" }] });
  });

  it("every Session counts its own; an outcome in another Session finishes nothing", () => {
    const v = verifyChainBytes(record([intent("a"), intent("b")], [done("a"), intent("c")], [intent("d"), done("d"), close()]));
    expect(v.unfinished_calls).toEqual({
      count: 3,
      calls: [
        { session_index: 0, call_id: "a" },
        { session_index: 0, call_id: "b" },
        { session_index: 1, call_id: "c" },
      ],
    });
  });

  it("a call_id that waits twice counts twice, and one outcome finishes one of them", () => {
    const v = verifyChainBytes(record([intent("x"), intent("x"), intent("y"), done("x")], [close()]));
    expect(v.unfinished_calls).toEqual({
      count: 2,
      calls: [
        { session_index: 0, call_id: "x" },
        { session_index: 0, call_id: "y" },
      ],
    });
  });

  it("a closed Session with every outcome, and a file whose calls all finished: none", () => {
    expect(verifyChainBytes(record([intent("a"), done("a"), close()], [intent("a"), done("a"), close()])).unfinished_calls).toEqual({ count: 0, calls: [] });
  });

  it("the list stops at 100 calls; the count goes on", () => {
    const ids = Array.from({ length: 250 }, (_, i) => `call-${i}`);
    const v = verifyChainBytes(record(ids.map(intent), [close()]));
    expect(v.unfinished_calls.count).toBe(250);
    expect(v.unfinished_calls.calls).toEqual(ids.slice(0, 100).map((call_id) => ({ session_index: 0, call_id })));
  });

  it("past the bound on waiting calls, the call that waited longest is counted then (memory stays bounded)", () => {
    // One more distinct call waiting than the bound: c0 is given up when the last one
    // arrives, so its outcome, later, finishes nothing. Had it been kept, the count would
    // be one less and the list would begin at c1.
    const ids = Array.from({ length: MAX_WAITING_CALLS + 1 }, (_, i) => `c${i}`);
    const v = verifyChainBytes(record([...ids.map(intent), done("c0"), close()]));
    expect(v.verdict).toEqual({ status: "verified" });
    expect(v.unfinished_calls.count).toBe(MAX_WAITING_CALLS + 1);
    expect(v.unfinished_calls.calls.slice(0, 2)).toEqual([
      { session_index: 0, call_id: "c0" },
      { session_index: 0, call_id: "c1" },
    ]);
  }, 120_000);

  it("the bound counts distinct call_ids: a second intent of a waiting call_id gives up no other call", () => {
    // As many distinct calls as the bound, and c1 waiting twice: within the bound, so c0 is
    // still waiting when its outcome comes. Counted by intents (one past the bound), c0 would
    // have been given up, its outcome finishing nothing: the count would be one more.
    const ids = Array.from({ length: MAX_WAITING_CALLS }, (_, i) => `c${i}`);
    const v = verifyChainBytes(record([...ids.map(intent), intent("c1"), done("c0"), close()]));
    expect(v.verdict).toEqual({ status: "verified" });
    expect(v.unfinished_calls.count).toBe(MAX_WAITING_CALLS);
    expect(v.unfinished_calls.calls.slice(0, 3)).toEqual([
      { session_index: 0, call_id: "c1" },
      { session_index: 0, call_id: "c1" },
      { session_index: 0, call_id: "c2" },
    ]);
  }, 120_000);

  it("a Tampered file reports what the walk counted before the break, on one thread or several", async () => {
    const text = record([intent("call-1")], [intent("call-2"), done("call-3")], [intent("z")], [close()]);
    // The last outcome's signature altered: the walk stops in Session 1, after Session 0 ended.
    const rows = text.trimEnd().split("\n");
    const at = rows.findIndex((r) => r.includes('"call_id":"call-3"'));
    rows[at] = (rows[at] ?? "").replace(/"signature":"(.)/, (_, c: string) => `"signature":"${c === "0" ? "1" : "0"}`);
    const bytes = Buffer.from(`${rows.join("\n")}\n`);
    const alone = verifyChainBytes(bytes);
    expect(alone.verdict.status).toBe("tampered");
    expect(alone.unfinished_calls).toEqual({ count: 1, calls: [{ session_index: 0, call_id: "call-1" }] });
    const threaded: Verification = await verifyChainBytesParallel(bytes, { threads: 2 }, ALL_ON_THREADS);
    expect(threaded).toEqual(alone);
  });

  it("on threads, a Verified file's count is the same as on one", async () => {
    const bytes = Buffer.from(record([intent("a"), done("a"), intent("b")], [intent("c"), done("d"), close()], [intent("e"), close()]));
    const alone = verifyChainBytes(bytes);
    expect(alone.unfinished_calls.count).toBe(3);
    expect(await verifyChainBytesParallel(bytes, { threads: 2 }, ALL_ON_THREADS)).toEqual(alone);
  });
});

describe("the tally's bound on the call_ids a Session keeps waiting (SPEC §18)", () => {
  // Call ids of 1 MiB: the bound on their characters is 32 of them.
  const BIG = 1 << 20;
  const id = (i: number): string => `${String(i).padStart(4, "0")}${"x".repeat(BIG - 4)}`;
  const FIT = MAX_WAITING_CHARS / BIG;

  function waiting(count: number): UnfinishedCallTally {
    const tally = new UnfinishedCallTally();
    for (let i = 0; i < count; i++) tally.intent(id(i), 0);
    return tally;
  }

  it("keeps every call up to the bound, then counts the one that waited longest as unfinished", () => {
    expect(FIT).toBe(32);
    const tally = waiting(FIT);
    expect(tally.result()).toEqual({ count: 0, calls: [] });
    tally.intent(id(FIT), 0);
    expect(tally.result()).toEqual({ count: 1, calls: [{ session_index: 0, call_id: id(0) }] });
    // The one given up no longer counts against the bound: the next call gives up one more.
    tally.intent(id(FIT + 1), 0);
    expect(tally.result().calls.map((c) => c.call_id)).toEqual([id(0), id(1)]);
  });

  it("an outcome frees its call's characters; an outcome for a call not waiting frees none", () => {
    const finished = waiting(FIT);
    finished.outcome(id(1));
    finished.intent(id(FIT), 0);
    expect(finished.result().count).toBe(0);

    const stranger = waiting(FIT);
    stranger.outcome(id(FIT + 5));
    stranger.intent(id(FIT), 0);
    expect(stranger.result().calls.map((c) => c.call_id)).toEqual([id(0)]);
  });

  it("a call_id with two intents waits for two outcomes", () => {
    const tally = new UnfinishedCallTally();
    tally.intent("twice", 0);
    tally.intent("twice", 0);
    tally.outcome("twice");
    tally.endSession(0);
    expect(tally.result()).toEqual({ count: 1, calls: [{ session_index: 0, call_id: "twice" }] });
  });

  it("a mark gives the tally as it stood there, though later Sessions left more unfinished", () => {
    const tally = new UnfinishedCallTally();
    tally.intent("first", 0);
    tally.endSession(0);
    const mark = tally.mark();
    tally.intent("second", 1);
    tally.endSession(1);
    expect(tally.result(mark)).toEqual({ count: 1, calls: [{ session_index: 0, call_id: "first" }] });
    expect(tally.result().count).toBe(2);
  });
});
