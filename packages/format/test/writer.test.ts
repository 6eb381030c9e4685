import { existsSync, readFileSync, readdirSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, RecordWriterError, LineHash, RequestDigest, SigningKey, repairTornTail, type WriterFault } from "../src/index.js";
import { insecureDevKey } from "../src/internal.js";
import { processStart } from "../src/durable.js";
import { lockPathFor } from "../src/durable/lock.js";
import { sha256Hex } from "../src/crypto/sha256.js";
import type { SignedPayload } from "../src/wire/line-types.js";
import type { UnsignedPayload } from "../src/write/calls.js";
import { DEV, POLICY, outcome, readLines, tempDir, writeSession } from "./support/chains.js";
import { faultOf as sharedFaultOf } from "./support/faults.js";
import { verifyChainFile } from "../src/verify/verify-record.js";

const faultOf = (promise: Promise<unknown>): Promise<WriterFault> => sharedFaultOf(promise, RecordWriterError);

const open = (path: string) => RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });

describe("Sessions (SPEC §7)", () => {
  it("a fresh file starts with an open at seq 0 that carries no prev_session_tail", async () => {
    const path = join(tempDir(), "a.aarl");
    const writer = await open(path);
    await writer.close();
    const [first] = readLines(path);
    expect(first).toMatchObject({ line_type: "open", seq: 0, prev_hash: "0".repeat(64), public_key: Buffer.from(DEV.publicKey).toString("hex") });
    expect(first).not.toHaveProperty("prev_session_tail");
  });

  it("reopening starts a new Session whose open back-references the previous tail", async () => {
    const path = await writeSession(join(tempDir(), "b.aarl"));
    const before = readFileSync(path, "utf8").trim().split("\n");
    const tail = LineHash.of(before.at(-1) ?? "");
    const writer = await open(path);
    await writer.close();
    expect(writer.head).toBe(LineHash.of(readFileSync(path, "utf8").trimEnd().split("\n").at(-1) ?? ""));
    const lines = readLines(path);
    expect(lines[before.length]).toMatchObject({ line_type: "open", seq: 0, prev_session_tail: tail });
    const v = await verifyChainFile(path);
    expect(v.verdict.status).toBe("verified");
    expect(v.sessions).toBe(2);
  });

  it("[M5.1] intent Lines are never signed; every other Line the writer writes is", async () => {
    const path = await writeSession(join(tempDir(), "signed.aarl"));
    for (const line of readLines(path)) {
      const signed = line["line_type"] !== "intent";
      expect("signature" in line, String(line["line_type"])).toBe(signed);
      expect("key_id" in line, String(line["line_type"])).toBe(signed);
    }
  });

  it("[M5.1] an intent has no signing path: the type of what the writer signs cannot hold one", () => {
    const intent: UnsignedPayload = { line_type: "intent", payload: { call_id: "c", tool_id: "t", request_digest: RequestDigest.of(Buffer.from("c")) } };
    // @ts-expect-error: `tsc -p tsconfig.check.json` fails here the day an intent becomes signable.
    const signed: SignedPayload = intent;
    expect(signed.line_type).toBe("intent");
  });

  it("each Line is on disk when its promise resolves", async () => {
    const path = join(tempDir(), "c.aarl");
    const writer = await open(path);
    await writer.intent({ call_id: "c1", tool_id: "t", request_digest: RequestDigest.of(Buffer.from("x")), policy_set_hash: POLICY });
    expect(readFileSync(path, "utf8")).toContain('"call_id":"c1"');
    await writer.close();
  });
});

describe("one writer per file", () => {
  it("a second writer is refused while the first holds the file, and admitted after", async () => {
    const path = join(tempDir(), "d.aarl");
    const first = await open(path);
    const fault = await faultOf(open(path));
    expect(fault).toMatchObject({ code: "locked", lockPath: lockPathFor(path), holder: { pid: process.pid }, stale: false });
    await first.close();
    expect(existsSync(lockPathFor(path))).toBe(false);
    const second = await open(path);
    await second.close();
  });

  it("a lock that could not be written is taken back, not left to refuse every later writer", async () => {
    const path = join(tempDir(), "lockfail.aarl");
    const probe = await (await import("node:fs/promises")).open(join(tempDir(), "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<void> };
    await probe.close();
    const original = proto.writeFile;
    proto.writeFile = () => Promise.reject(Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" }));
    try {
      expect((await faultOf(open(path))).code).toBe("io");
    } finally {
      proto.writeFile = original;
    }
    expect(existsSync(lockPathFor(path))).toBe(false);
    const writer = await open(path);
    await writer.close();
  });

  it("a lock left by a process that no longer runs is recovered, and the writer says so", async () => {
    const path = join(tempDir(), "e.aarl");
    const gone = { pid: 2 ** 22 + 12345, host: hostname() };
    writeFileSync(lockPathFor(path), JSON.stringify(gone));
    const writer = await open(path);
    expect(writer.recoveredLock).toEqual({ code: "dead_holder", holder: gone });
    expect(JSON.parse(readFileSync(lockPathFor(path), "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
    await writer.close();
    expect(readdirSync(dirname(path))).toEqual(["e.aarl"]);
  });

  it("a lock whose pid another process now holds (it started at another time) is recovered; the holder's own start keeps it", async () => {
    const started = processStart(process.ppid);
    if (started === undefined) return; // No /proc: a pid alone is all there is to go on.
    const path = join(tempDir(), "reused.aarl");
    const reused = { pid: process.ppid, host: hostname(), started: String(Number(started) + 1) };
    writeFileSync(lockPathFor(path), JSON.stringify(reused));
    const writer = await open(path);
    expect(writer.recoveredLock).toEqual({ code: "dead_holder", holder: reused });
    expect(JSON.parse(readFileSync(lockPathFor(path), "utf8"))).toMatchObject({ pid: process.pid, started: processStart(process.pid) });
    await writer.close();

    const live = { pid: process.ppid, host: hostname(), started };
    const other = join(tempDir(), "live-started.aarl");
    writeFileSync(lockPathFor(other), JSON.stringify(live));
    expect(await faultOf(open(other))).toMatchObject({ code: "locked", holder: live, stale: false });
  });

  it("an empty or unreadable lock, which no writer leaves, is recovered", async () => {
    for (const text of ["", '{"pid":', "\u0000\u0000"]) {
      const path = join(tempDir(), "empty.aarl");
      writeFileSync(lockPathFor(path), text);
      const writer = await open(path);
      expect(writer.recoveredLock).toEqual({ code: "unreadable" });
      await writer.close();
    }
  });

  it("a live holder's lock is never taken: this host's running pid, or any pid on another host", async () => {
    for (const holder of [
      { pid: process.ppid, host: hostname() },
      { pid: 2 ** 22 + 12345, host: `not-${hostname()}` },
    ]) {
      const path = join(tempDir(), "live.aarl");
      writeFileSync(lockPathFor(path), JSON.stringify(holder));
      const fault = await faultOf(open(path));
      expect(fault).toMatchObject({ code: "locked", holder, stale: false });
      expect(JSON.parse(readFileSync(lockPathFor(path), "utf8"))).toEqual(holder);
    }
  });

  it("writers recovering one stale lock at once: exactly one holds the file, and nothing is left beside it", async () => {
    // Eight at once: moving the lock aside to compare it (the recovery before 2026-12-07) let
    // a third writer take the name while a live lock was moved aside, and two writers held the
    // file: with three, in round 19 of a run beside busy cores; with eight, within 50 rounds on
    // a quiet machine.
    for (let round = 0; round < 100; round++) {
      const dir = tempDir();
      const path = join(dir, "race.aarl");
      writeFileSync(lockPathFor(path), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname() }));
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => open(path)));
      const held = results.filter((r) => r.status === "fulfilled");
      expect(held, `round ${round}`).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect((r.reason as RecordWriterError).fault.code).toBe("locked");
      for (const r of held) await r.value.close();
      expect(readdirSync(dir), `round ${round}`).toEqual(["race.aarl"]);
    }
  });

  it("a recovery claim left by a writer killed while recovering is passed over; a live writer's claim refuses", async () => {
    const stale = `${JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname() })}\n`;
    const claim = (path: string, level: number): string => `${lockPathFor(path)}.recovering-${sha256Hex(stale).slice(0, 16)}.${level}`;

    const dir = tempDir();
    const path = join(dir, "claimed.aarl");
    writeFileSync(lockPathFor(path), stale);
    writeFileSync(claim(path, 0), JSON.stringify({ pid: 2 ** 22 + 12346, host: hostname() }));
    const writer = await open(path);
    expect(writer.recoveredLock).toMatchObject({ code: "dead_holder" });
    expect(readdirSync(dir).sort()).toEqual(["claimed.aarl", "claimed.aarl.lock"]);
    await writer.close();

    const busy = join(tempDir(), "busy.aarl");
    writeFileSync(lockPathFor(busy), stale);
    writeFileSync(claim(busy, 0), JSON.stringify({ pid: process.ppid, host: hostname() }));
    // The writer recovering the lock is named, live: not the stale holder, whose lock a user
    // told "remove it" would remove just as that writer links its own.
    expect(await faultOf(open(busy))).toMatchObject({ code: "locked", holder: { pid: process.ppid }, stale: false });
    expect(readFileSync(lockPathFor(busy), "utf8")).toBe(stale);
  });
});

describe("torn tails (SPEC §13.2)", () => {
  it("refuses to append onto a torn final line, naming its byte offset", async () => {
    const path = await writeSession(join(tempDir(), "f.aarl"));
    const size = statSync(path).size;
    const lastStart = readFileSync(path, "utf8").trimEnd().lastIndexOf("\n") + 1;
    truncateSync(path, size - 30);
    const fault = await faultOf(open(path));
    expect(fault).toMatchObject({ code: "torn_tail", offset: lastStart });
    expect(new RecordWriterError(fault).message).toContain(`byte offset ${lastStart}`);
    expect(existsSync(lockPathFor(path))).toBe(false);
  });

  it("repair moves the torn bytes to a side file, and a new Session chains onto what is left", async () => {
    const path = await writeSession(join(tempDir(), "g.aarl"));
    const original = readFileSync(path);
    const lastStart = original.toString("utf8").trimEnd().lastIndexOf("\n") + 1;
    truncateSync(path, original.length - 30);
    const torn = readFileSync(path).subarray(lastStart);
    const result = await repairTornTail(path);
    expect(result).toEqual({ repaired: true, offset: lastStart, bytes: torn.length, sidePath: `${path}.torn-${lastStart}` });
    expect(readFileSync(`${path}.torn-${lastStart}`)).toEqual(torn);
    expect(readFileSync(path)).toEqual(original.subarray(0, lastStart));
    const writer = await open(path);
    await writer.close();
    const v = await verifyChainFile(path);
    expect(v.verdict.status).toBe("verified");
    expect(v.sessions).toBe(2);
  });

  it("a last line that parses but has no canonical form is Tampered, not torn: neither appended onto nor cut off [M8.1]", async () => {
    const path = await writeSession(join(tempDir(), "t.aarl"));
    // A blank row in the middle: the line number counts non-blank rows only (SPEC §1.1).
    const rows = readFileSync(path, "utf8").trimEnd().split("\n");
    const last = rows.at(-1) ?? "";
    const edited = [rows[0], "", ...rows.slice(1, -1), last.replace(/"seq":(\d+)/, '"seq":$1.0')].join("\n") + "\n";
    writeFileSync(path, edited);
    const lastStart = edited.lastIndexOf("{");

    const verdict = (await verifyChainFile(path)).verdict;
    expect(verdict).toMatchObject({ status: "tampered", reason: { code: "malformed_line", line: rows.length } });
    if (verdict.status !== "tampered" || verdict.reason.code !== "malformed_line") throw new Error("not malformed_line");
    expect(verdict.reason.detail).toMatch(/^outside the canonical value space, so it has no reproducible hash: floating-point value at \$\.seq /);

    const opening = await faultOf(open(path));
    expect(opening).toEqual({ code: "tampered_tail", path, offset: lastStart, line: rows.length, detail: verdict.reason.detail });
    expect(new RecordWriterError(opening).message).toContain(`(Tampered: line ${rows.length}: ${verdict.reason.detail})`);

    const repairing = await faultOf(repairTornTail(path));
    expect(repairing).toEqual(opening);
    expect(readFileSync(path, "utf8")).toBe(edited);
    expect(readdirSync(dirname(path)).filter((f) => f.includes(".torn-"))).toEqual([]);
    expect(existsSync(lockPathFor(path))).toBe(false);
  });

  it("repair leaves a whole file alone", async () => {
    const path = await writeSession(join(tempDir(), "h.aarl"));
    const before = readFileSync(path);
    expect(await repairTornTail(path)).toEqual({ repaired: false, tail: "line" });
    expect(readFileSync(path)).toEqual(before);
  });

  it("a last line that parses but lost its newline is completed, not glued onto", async () => {
    const path = await writeSession(join(tempDir(), "i.aarl"));
    truncateSync(path, statSync(path).size - 1);
    const writer = await open(path);
    await writer.close();
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });
});

describe("refusals that consume nothing", () => {
  it("the published development key is refused for a file unless explicitly allowed", async () => {
    const fault = await faultOf(RecordWriter.open(join(tempDir(), "j.aarl"), { key: insecureDevKey() }));
    expect(fault.code).toBe("insecure_dev_key");
  });

  it("a value outside the value space is refused and leaves no seq gap", async () => {
    const path = join(tempDir(), "k.aarl");
    const writer = await open(path);
    const fault = await faultOf(writer.outcome({ ...outcome("c"), wall_ms: 1.5 }));
    expect(fault).toMatchObject({ code: "not_canonical", fault: { code: "float_not_allowed", path: "$.wall_ms" } });
    const next = await writer.outcome(outcome("c"));
    expect(next.seq).toBe(1);
    await writer.close();
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });

  it("a line over the row limit is refused", async () => {
    const writer = await open(join(tempDir(), "l.aarl"));
    const fault = await faultOf(writer.outcome({ ...outcome("c"), execution: { status: "trap", message: "x".repeat(1 << 20) } }));
    expect(fault.code).toBe("line_too_long");
    await writer.close();
  });

  it("a closed writer refuses appends", async () => {
    const writer = await open(join(tempDir(), "m.aarl"));
    await writer.close();
    expect((await faultOf(writer.outcome(outcome("late")))).code).toBe("closed");
  });

  it("a write that fails stops the writer and releases the file", async () => {
    const dir = tempDir();
    const path = join(dir, "full.aarl");
    symlinkSync("/dev/full", path);
    const fault = await faultOf(open(path));
    expect(fault.code).toBe("failed");
    expect(existsSync(lockPathFor(path))).toBe(false);
  });
});

describe("an outcome on every exit path", () => {
  const start = (id: string) => ({ call_id: id, tool_id: "t", request_digest: RequestDigest.of(Buffer.from(id)), policy_set_hash: POLICY });

  it("close() records calls still in flight as abandoned", async () => {
    const path = join(tempDir(), "n.aarl");
    const writer = await open(path);
    await writer.beginCall(start("left-open"));
    expect(writer.inFlight).toEqual(["left-open"]);
    await writer.close();
    const abandoned = readLines(path).find((l) => l["line_type"] === "outcome");
    expect(abandoned).toMatchObject({ call_id: "left-open", execution: { status: "host_denied", reason: "session abandoned" } });
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });

  it("close() records a call opened by intent() as abandoned, under the policy set its start named", async () => {
    const path = join(tempDir(), "intent-open.aarl");
    const writer = await open(path);
    await writer.intent(start("by-intent"));
    expect(writer.inFlight).toEqual(["by-intent"]);
    await writer.close();
    const lines = readLines(path);
    expect(lines.map((l) => l["line_type"])).toEqual(["open", "intent", "outcome", "close"]);
    expect(lines[2]).toMatchObject({
      call_id: "by-intent",
      tool_id: "t",
      request_digest: RequestDigest.of(Buffer.from("by-intent")),
      policy_set_hash: POLICY,
      execution: { status: "host_denied", reason: "session abandoned" },
    });
    const v = await verifyChainFile(path);
    expect(v.verdict.status).toBe("verified");
    expect(v.unfinished_calls.count).toBe(0);
  });

  it("outcome() ends the call intent() opened: close() writes no second outcome, and the id is free again", async () => {
    const path = join(tempDir(), "intent-outcome.aarl");
    const writer = await open(path);
    await writer.intent(start("answered"));
    await writer.outcome(outcome("answered"));
    expect(writer.inFlight).toEqual([]);
    await writer.intent(start("answered"));
    expect((await faultOf(writer.intent(start("answered")))).code).toBe("duplicate_call");
    await writer.outcome(outcome("answered"));
    await writer.close();
    expect(readLines(path).map((l) => l["line_type"])).toEqual(["open", "intent", "outcome", "intent", "outcome", "close"]);
  });

  it("an outcome() for no call in flight stands alone and ends nothing", async () => {
    const path = join(tempDir(), "bare-outcome.aarl");
    const writer = await open(path);
    await writer.beginCall(start("open-one"));
    await writer.outcome(outcome("refused-before-intent"));
    expect(writer.inFlight).toEqual(["open-one"]);
    await writer.close();
    const outcomes = readLines(path).filter((l) => l["line_type"] === "outcome");
    expect(outcomes.map((o) => [o["call_id"], (o["execution"] as { status: string }).status])).toEqual([
      ["refused-before-intent", "success"],
      ["open-one", "host_denied"],
    ]);
  });

  it("call() records a trap when the body throws, and rethrows", async () => {
    const path = join(tempDir(), "o.aarl");
    const writer = await open(path);
    await expect(writer.call(start("boom"), () => Promise.reject(new Error("tool crashed")))).rejects.toThrow("tool crashed");
    const done = await writer.call(start("fine"), () =>
      Promise.resolve({
        value: 42,
        outcome: {
          policy: { status: "allowed" as const },
          capability: { status: "denied" as const, reason: "n/a" },
          execution: { status: "success" as const },
          decision_axes: {},
        },
      }),
    );
    expect(done).toBe(42);
    await writer.close();
    const outcomes = readLines(path).filter((l) => l["line_type"] === "outcome");
    expect(outcomes.map((o) => [o["call_id"], (o["execution"] as { status: string }).status])).toEqual([
      ["boom", "trap"],
      ["fine", "success"],
    ]);
  });

  it("an unknown or repeated call id is refused", async () => {
    const writer = await open(join(tempDir(), "p.aarl"));
    expect((await faultOf(writer.endCall("nope", outcome("x")))).code).toBe("unknown_call");
    await writer.beginCall(start("twice"));
    expect((await faultOf(writer.beginCall(start("twice")))).code).toBe("duplicate_call");
    await writer.close();
  });

  it("a Session signed by one key, reopened with another, is legal rotation", async () => {
    const path = await writeSession(join(tempDir(), "q.aarl"));
    const rotated = SigningKey.generate();
    const writer = await RecordWriter.open(path, { key: rotated });
    await writer.close();
    const v = await verifyChainFile(path, { trust: [Buffer.from(DEV.publicKey).toString("hex"), rotated.publicKeyHex] });
    expect(v.verdict.status).toBe("verified");
    expect(v.key_ids).toEqual([DEV.keyId, rotated.keyId]);
  });
});

describe("outcomes made durable soon (SPEC §13.2)", () => {
  const call = (id: string) => ({ call_id: id, tool_id: "t", request_digest: RequestDigest.of(Buffer.from(id)), policy_set_hash: POLICY });
  const result = {
    policy: { status: "allowed" },
    capability: { status: "denied", reason: "not evaluated" },
    execution: { status: "success" },
    decision_axes: {},
  } as const;

  it("an outcome appended soon is written with the next Line that must be durable now, in append order", async () => {
    const path = join(tempDir(), "soon.aarl");
    const writer = await open(path);
    await writer.beginCall(call("c1"));
    const soon = writer.endCall("c1", result, { sync: "soon" });
    const now = writer.beginCall(call("c2"));
    const order: string[] = [];
    await Promise.all([soon.then(() => order.push("soon")), now.then(() => order.push("now"))]);
    // Resolved together, by the one flush that wrote both.
    expect(order).toEqual(["soon", "now"]);
    expect(readLines(path).map((l) => [l["line_type"], l["call_id"]])).toEqual([
      ["open", undefined],
      ["intent", "c1"],
      ["outcome", "c1"],
      ["intent", "c2"],
    ]);
    await writer.close();
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });

  it("an outcome appended soon, with nothing after it, is still made durable, and close() waits for it", async () => {
    const path = join(tempDir(), "alone.aarl");
    const writer = await open(path);
    await writer.beginCall(call("c1"));
    await writer.endCall("c1", result, { sync: "soon" });
    expect(readFileSync(path, "utf8")).toContain('"line_type":"outcome"');
    await writer.beginCall(call("c2"));
    const pending = writer.endCall("c2", result, { sync: "soon" });
    await writer.close();
    await pending;
    expect(readLines(path).map((l) => l["line_type"])).toEqual(["open", "intent", "outcome", "intent", "outcome", "close"]);
  });
});

describe("a call that did not run (SPEC §13.2)", () => {
  it("recordUnrun writes its intent and outcome together; its id is free again after", async () => {
    const path = join(tempDir(), "unrun.aarl");
    const writer = await open(path);
    const start = { call_id: "r1", tool_id: "rm", policy_set_hash: POLICY, request: Buffer.from('{"method":"tools/call"}') };
    const refused = {
      policy: { status: "denied", reason: "no" },
      capability: { status: "denied", reason: "policy blocked before capability" },
      execution: { status: "host_denied", reason: "not executed" },
      decision_axes: {},
    } as const;
    const appended = await writer.recordUnrun(start, refused);
    expect(appended.seq).toBe(2);
    expect(writer.inFlight).toEqual([]);
    expect(
      await faultOf(
        writer
          .recordUnrun({ ...start, call_id: "r2" }, refused)
          .then(() => writer.beginCall({ ...start, call_id: "r2" }))
          .then(() => writer.recordUnrun({ ...start, call_id: "r2" }, refused)),
      ),
    ).toMatchObject({ code: "duplicate_call", callId: "r2" });
    await writer.close();
    const lines = readLines(path);
    expect(lines.slice(1, 3)).toMatchObject([
      { line_type: "intent", call_id: "r1", request_digest: RequestDigest.of(start.request) },
      { line_type: "outcome", call_id: "r1", policy: { status: "denied" }, execution: { status: "host_denied" } },
    ]);
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });
});
