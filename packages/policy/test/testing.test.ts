import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parsePolicySet } from "@aegis/policy";
import { RecheckAssertionError, assertRecheckChanges, assertRecheckUnchanged } from "@aegis/policy/testing";
import { describe, expect, it } from "vitest";
import { fixturePath, fixtureText } from "./support/fixtures.js";
import { policy } from "./support/policies.js";
import { tempDir, writeSession } from "./support/records.js";

async function failure(promise: Promise<unknown>): Promise<RecheckAssertionError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RecheckAssertionError) return error;
    throw error;
  }
  throw new Error("expected the assertion to fail");
}

const unchanged = parsePolicySet(fixtureText("unchanged.yaml"));
const newDeny = parsePolicySet(fixtureText("new_deny.yaml"));
const CLEAN = fixturePath("session_clean.jsonl");

describe("@aegis/policy/testing (SPEC §16.5)", () => {
  it("[M16.5] assertRecheckUnchanged passes when every call is unchanged, from a path or from bytes", async () => {
    await expect(assertRecheckUnchanged(CLEAN, unchanged)).resolves.toMatchObject({ outcomes: 3, unchanged: 3 });
    await expect(assertRecheckUnchanged(readFileSync(CLEAN), { code: "policy", policy: unchanged })).resolves.toMatchObject({ outcomes: 3 });
  });

  it("[M16.5] assertRecheckUnchanged fails on a changed call, naming it", async () => {
    const error = await failure(assertRecheckUnchanged(CLEAN, newDeny));
    expect(error.message).toBe("recheck: 1 of 3 recorded call(s) are not unchanged:\n  call call-1 session 0 seq 2: newly_blocked was=allowed now=denied");
    expect(error.verdicts.map((v) => v.call_id)).toEqual(["call-1"]);
  });

  it("[M16.5] assertRecheckUnchanged fails on an indeterminate call", async () => {
    const error = await failure(assertRecheckUnchanged(fixturePath("session.jsonl"), unchanged));
    expect(error.message).toContain("call call-4 session 0 seq 0: indeterminate unknown_policy_set_hash");
    expect(error.message).toContain("call call-5 session 0 seq 6: indeterminate no_binding");
  });

  it("[M16.5] both fail when nothing was rechecked", async () => {
    const empty = Buffer.from('{"line_type":"open","seq":0}\n{"line_type":"close","seq":1}\n');
    expect((await failure(assertRecheckUnchanged(empty, unchanged))).message).toBe("recheck: the record holds no outcome, so nothing was rechecked");
    expect((await failure(assertRecheckChanges(empty, unchanged, []))).message).toContain("nothing was rechecked");
  });

  it("[M16.5] assertRecheckChanges passes on exactly the expected calls, with or without kinds", async () => {
    await expect(assertRecheckChanges(CLEAN, newDeny, ["call-1"])).resolves.toMatchObject({ newly_blocked: 1 });
    await expect(assertRecheckChanges(CLEAN, newDeny, { "call-1": "newly_blocked" })).resolves.toMatchObject({ newly_blocked: 1 });
    await expect(assertRecheckChanges(CLEAN, unchanged, [])).resolves.toMatchObject({ unchanged: 3 });
  });

  it("[M16.5] assertRecheckChanges fails on a missing change, an extra change, a wrong kind, an indeterminate call", async () => {
    const missing = await failure(assertRecheckChanges(CLEAN, newDeny, ["call-1", "call-2"]));
    expect(missing.message).toBe("recheck: the changed calls are not the expected ones:\n  expected to change: call call-2 session 0 seq 3: unchanged denied");
    const extra = await failure(assertRecheckChanges(CLEAN, newDeny, []));
    expect(extra.message).toContain("changed, and not expected to: call call-1 session 0 seq 2: newly_blocked was=allowed now=denied");
    const kind = await failure(assertRecheckChanges(CLEAN, newDeny, { "call-1": "newly_parked" }));
    expect(kind.message).toContain("expected newly_parked: call call-1 session 0 seq 2: newly_blocked");
    const absent = await failure(assertRecheckChanges(CLEAN, newDeny, ["call-1", "call-9"]));
    expect(absent.message).toContain("call call-9: expected to change, and not in the record");
    const unknown = await failure(assertRecheckChanges(fixturePath("session.jsonl"), newDeny, ["call-1"]));
    expect(unknown.message).toContain("indeterminate, so the changes are not known to be all: call call-4");
  });

  it("[M16.5] a stricter policy over a record our writer wrote: exactly the calls it would change", async () => {
    const recordedUnder = policy("version: 2", "default: allow");
    const stricter = policy(
      "version: 2",
      "default: allow",
      "rules:",
      "  - {id: no-rm, action: deny, tool: rm}",
      "  - {id: gate-pay, action: pending_approval, tool: pay}",
    );
    const path = join(tempDir(), "run.aarl");
    await writeSession(path, recordedUnder, [
      { call_id: "1", tool_id: "ls" },
      { call_id: "2", tool_id: "rm" },
      { call_id: "3", tool_id: "pay" },
    ]);
    await assertRecheckUnchanged(path, recordedUnder);
    await assertRecheckChanges(path, stricter, { "2": "newly_blocked", "3": "newly_parked" });
    await expect(assertRecheckChanges(path, stricter, ["2"])).rejects.toThrow("changed, and not expected to: call 3 session 0 seq 6: newly_parked was=allowed");
  });
});
