import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, frame, linesOf, outcomes, sha256, verdictOf } from "./support.js";
import { workspace, wrapMirror } from "./wrap-process.js";

const initialize = frame({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/** How long one 64 MiB frame may take to cross wrap on a machine busy with other work. */
const LARGE_FRAME_MS = 150_000;

describe("aegis wrap, as a process, between a client and a server", () => {
  it("relays a session and records only the tools/call; the record verifies", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(initialize);
    expect(await wrap.nextJson()).toMatchObject({ id: 0, result: { serverInfo: { name: "mirror" } } });
    wrap.send(frame({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
    expect(await wrap.nextJson()).toMatchObject({ id: 1, result: { tools: [{ name: "echo" }, { name: "write_note" }] } });
    const request = call(2, "echo", { text: "hi" });
    wrap.send(request);
    const answer = await wrap.next();
    expect(JSON.parse(answer.toString())).toMatchObject({ id: 2, result: { frame_sha256: sha256(request) } });
    wrap.end();
    expect(await wrap.finished()).toEqual({ code: 0, signal: null });
    expect(linesOf(w.audit).map((l) => l.line_type)).toEqual(["open", "intent", "outcome", "close"]);
    expect(outcomes(w.audit)[0]).toMatchObject({
      tool_id: "echo",
      request_digest: sha256(request),
      response_digest: sha256(answer),
      execution: { status: "success" },
    });
    expect(await verdictOf(w.audit)).toBe("verified");
  });

  it("relays a method it has never heard of, and never answers for the server", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(frame({ jsonrpc: "2.0", id: 1, method: "vendor/unheard-of" }));
    expect(await wrap.nextJson()).toMatchObject({ id: 1, result: { mirrored: "vendor/unheard-of" } });
    wrap.end();
    await wrap.finished();
    expect(Buffer.concat(wrap.stdout).toString()).not.toContain("-32601");
    expect(linesOf(w.audit).map((l) => l.line_type)).toEqual(["open", "close"]);
  });

  it("[M17.1] keeps a CRLF frame's \\r, for the server and in the digest", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    const request = Buffer.concat([call(1, "echo"), Buffer.from("\r")]);
    wrap.send(request);
    expect(await wrap.nextJson()).toMatchObject({ result: { frame_len: request.length, frame_sha256: sha256(request) } });
    wrap.end();
    await wrap.finished();
    expect(outcomes(w.audit)[0]?.["request_digest"]).toBe(sha256(request));
  });

  it("[M17.8] refuses a frame that is not UTF-8 without ending the stream, drops blank frames, and gives a last frame its newline", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    const garbage = Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x80]);
    wrap.send(garbage);
    wrap.send("   \t\r");
    wrap.send("");
    expect(await wrap.nextJson()).toMatchObject({ id: null, error: { data: { aegis: { code: "UNREADABLE_FRAME" } } } });
    wrap.send(call(1, "echo"));
    expect(await wrap.nextJson()).toMatchObject({ id: 1 });
    wrap.send(frame({ jsonrpc: "2.0", id: 2, method: "ping" }), false);
    wrap.end();
    expect(await wrap.nextJson()).toMatchObject({ id: 2, result: { mirrored: "ping" } });
    await wrap.finished();
    // The server answers in order: had any of those frames reached it, it would have said so before answering 1.
    expect(wrap.stderr).not.toMatch(/mirror: not JSON/);
    expect(outcomes(w.audit).map((o) => [o["tool_id"], o["request_digest"]])).toEqual([
      ["<unreadable-frame>", sha256(garbage)],
      ["echo", sha256(call(1, "echo"))],
    ]);
  });

  it("tees the server's stderr byte for byte, a byte that is not UTF-8 included, and keeps it off stdout", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(frame({ jsonrpc: "2.0", id: 1, method: "test/stderr" }));
    await wrap.next();
    wrap.end();
    await wrap.finished();
    expect(wrap.stderrBytes.includes(Buffer.from([0x62, 0x61, 0x64, 0x20, 0xff, 0xfe, 0x20, 0x62, 0x79, 0x74, 0x65, 0x73, 0x0a]))).toBe(true);
    expect(Buffer.concat(wrap.stdout).includes(Buffer.from([0xff, 0xfe]))).toBe(false);
  });

  it("[M17.2] does not let the server's own request close the client's call with the same id", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(call(9, "never"));
    wrap.send(frame({ jsonrpc: "2.0", id: 10, method: "test/server-request", params: { collide: 9 } }));
    const serverRequest = await wrap.next();
    expect(JSON.parse(serverRequest.toString())).toMatchObject({ id: 9, method: "sampling/createMessage" });
    const answer = await wrap.next();
    expect(JSON.parse(answer.toString())).toMatchObject({ id: 9, result: { content: [{ text: "the real answer" }] } });
    await wrap.next();
    wrap.end();
    await wrap.finished();
    const nine = outcomes(w.audit).find((o) => o["tool_id"] === "never");
    expect(nine?.["response_digest"]).toBe(sha256(answer));
    expect(nine?.["execution"]).toEqual({ status: "success" });
  });

  it("[M17.10] refuses a batch holding calls: the server receives none of it, and each call is recorded as not run", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    const batch = frame([JSON.parse(call(1, "a").toString()), JSON.parse(call(2, "b").toString())]);
    wrap.send(batch);
    const answer = JSON.parse((await wrap.next()).toString()) as { id: number; error: { data: { aegis: { code: string } } } }[];
    expect(answer.map((a) => [a.id, a.error.data.aegis.code])).toEqual([
      [1, "HOST_DENIED"],
      [2, "HOST_DENIED"],
    ]);
    wrap.send(frame({ jsonrpc: "2.0", id: 3, method: "ping" }));
    await wrap.next();
    wrap.end();
    await wrap.finished();
    expect(wrap.stderr).not.toContain(sha256(batch));
    expect(wrap.stderr).toContain("received ping 3 ");
    expect(outcomes(w.audit).map((o) => [o["tool_id"], o["request_digest"], o["execution"]])).toEqual([
      ["a", sha256(batch), { status: "host_denied", reason: "not executed" }],
      ["b", sha256(batch), { status: "host_denied", reason: "not executed" }],
    ]);
    expect(await verdictOf(w.audit)).toBe("verified");
  });

  it("exits with the server's code when it dies mid-call, says so, and records why the call went unanswered", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(call(1, "never"));
    wrap.send(frame({ jsonrpc: "2.0", id: 2, method: "test/exit" }));
    expect(await wrap.finished()).toEqual({ code: 3, signal: null });
    expect(wrap.stderr).toContain("aegis wrap: child process exited before the client closed stdin");
    expect(outcomes(w.audit)[0]).toMatchObject({
      execution: { status: "host_denied", reason: "child exited before responding" },
      policy: { status: "denied", reason: "not evaluated" },
    });
    expect(await verdictOf(w.audit)).toBe("verified");
  });

  it("carries a server still working after the client hung up to the end: the grace bounds silence, not work", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(call(1, "echo"));
    await wrap.next();
    wrap.send(frame({ jsonrpc: "2.0", id: 2, method: "test/chatter", params: { ms: 6500 } }));
    wrap.send(call(3, "never"));
    wrap.end();
    const exit = await wrap.finished();
    expect(exit).toEqual({ code: 0, signal: null });
    const frames = Buffer.concat(wrap.stdout).toString().trim().split("\n");
    expect(JSON.parse(frames.at(-1) ?? "{}")).toMatchObject({ id: 2, result: { mirrored: "test/chatter" } });
    // The call the server never answered: it exited (nothing kept it up) without a word.
    expect(outcomes(w.audit).at(-1)).toMatchObject({ tool_id: "never", execution: { reason: "child exited before responding" } });
  }, 30_000);

  it("gives up on a server that stays silent after the client hung up, and never calls it dead", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(call(1, "never"));
    wrap.send(frame({ jsonrpc: "2.0", id: 2, method: "test/hang" }));
    await wrap.stderrHas("mirror: received test/hang");
    wrap.end();
    const exit = await wrap.finished();
    expect(exit.code).toBe(1);
    expect(outcomes(w.audit)[0]).toMatchObject({
      execution: { status: "host_denied", reason: "client closed stdin; child did not answer within the shutdown grace" },
    });
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 30_000);

  it("[M17.6] closes the Session cleanly on SIGTERM: the call in flight gets its outcome, and a signed close", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(call(1, "echo"));
    await wrap.next();
    wrap.send(call(2, "never"));
    await wrap.stderrHas("mirror: received tools/call 2");
    wrap.child.kill("SIGTERM");
    expect(await wrap.finished()).toEqual({ code: 143, signal: null });
    expect(linesOf(w.audit).at(-1)?.line_type).toBe("close");
    expect(outcomes(w.audit)[1]).toMatchObject({ execution: { status: "host_denied", reason: "aegis wrap received SIGTERM before the child responded" } });
    expect(await verdictOf(w.audit)).toBe("verified");
  });

  it("[M17.6] does not let a server that keeps talking hold the Session open after SIGTERM", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(frame({ jsonrpc: "2.0", id: 1, method: "test/chatter", params: { ms: 20_000 } }));
    wrap.send(call(2, "never"));
    await wrap.stderrHas("mirror: received tools/call 2");
    await wrap.next();
    wrap.child.kill("SIGTERM");
    expect(await wrap.finished()).toEqual({ code: 143, signal: null });
    // The chatter's answer (after 20 s) never came: wrap stopped while the server still talked.
    expect(Buffer.concat(wrap.stdout).toString()).not.toContain('"mirrored":"test/chatter"');
    expect(linesOf(w.audit).at(-1)?.line_type).toBe("close");
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 30_000);

  it("stops after a record failure even when the client keeps its end open", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w, [], { shell: "ulimit -f 2" });
    wrap.send(call(1, "echo"));
    await wrap.next();
    await wrap.stderrHas("the record cannot be written");
    wrap.send(call(2, "echo"));
    expect(await wrap.nextJson()).toMatchObject({ id: 2, result: { isError: true, _meta: { "io.github.aegis-ts/refusal": { code: "RECORD_FAILED" } } } });
    // No end of stdin from the client: wrap goes on its own, within the grace.
    expect((await wrap.finished()).code).toBe(1);
  }, 30_000);

  it(
    "relays a 64 MiB frame each way, and records both digests",
    async () => {
      const w = await workspace();
      const wrap = wrapMirror(w);
      const big = call(1, "echo", { text: "y".repeat(64 * 1024 * 1024) });
      wrap.send(big);
      // 64 MiB read strictly, hashed and recorded each way: bounded generously, for a busy machine.
      expect(await wrap.nextJson(LARGE_FRAME_MS)).toMatchObject({ id: 1, result: { frame_len: big.length, frame_sha256: sha256(big) } });
      wrap.send(call(2, "big", { bytes: 64 * 1024 * 1024 }));
      const answer = await wrap.next(LARGE_FRAME_MS);
      expect(answer.length).toBeGreaterThan(64 * 1024 * 1024);
      wrap.end();
      await wrap.finished();
      expect(outcomes(w.audit).map((o) => [o["request_digest"], o["response_digest"] === sha256(answer)])).toEqual([
        [sha256(big), false],
        [expect.any(String), true],
      ]);
    },
    3 * LARGE_FRAME_MS,
  );

  it("[M17.4] lets no call run once the record cannot be written (a file size limit reached), and exits 1", async () => {
    const w = await workspace();
    // 2 blocks of 512 bytes: the open and the first intent fit; the first outcome does not.
    const wrap = wrapMirror(w, [], { shell: "ulimit -f 2" });
    wrap.send(call(1, "echo"));
    expect(await wrap.nextJson()).toMatchObject({ id: 1, result: { mirrored: "tools/call" } });
    await wrap.stderrHas("the record cannot be written");
    wrap.send(call(2, "echo"));
    expect(await wrap.nextJson()).toMatchObject({
      id: 2,
      result: { isError: true, _meta: { "io.github.aegis-ts/refusal": { code: "RECORD_FAILED", layer: "wrap" } } },
    });
    wrap.end();
    expect((await wrap.finished()).code).toBe(1);
    expect(wrap.stderr).not.toContain("mirror: received tools/call 2");
  });

  it("carries on when the client's reading end goes away mid-call, and records the answer", async () => {
    const w = await workspace();
    const wrap = wrapMirror(w);
    wrap.send(frame({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo" } }));
    await wrap.next();
    wrap.send(frame({ jsonrpc: "2.0", id: 2, method: "test/slow" }));
    wrap.send(call(3, "echo"));
    await wrap.stderrHas("mirror: received tools/call 3");
    wrap.child.stdout.destroy();
    wrap.end();
    const exit = await wrap.finished();
    expect(exit.signal).toBeNull();
    expect(linesOf(w.audit).at(-1)?.line_type).toBe("close");
    expect(await verdictOf(w.audit)).toBe("verified");
  });

  it("does not start the server when the record cannot be opened, and says why", async () => {
    const w = await workspace();
    writeFileSync(join(w.dir, "record.aarl"), "{torn");
    const wrap = wrapMirror(w);
    const exit = await wrap.finished();
    expect(exit.code).toBe(1);
    expect(wrap.stderr).toMatch(/^error: .*torn final line/m);
    expect(wrap.stderr).toMatch(/^help: /m);
    expect(wrap.stderr).not.toContain("mirror:");
  });
});

describe("aegis wrap --policy, as a process: how a refused call is answered (SPEC §17.3)", () => {
  const POLICY = `version: 2
default: deny
rules:
  - { id: once, action: rate_limit, tool: echo, rate: { max: 1, per_seconds: 3600 } }
  - { id: park-notes, action: pending_approval, tool: write_note }
`;

  async function refusing(extra: readonly string[]) {
    const w = await workspace();
    const policy = join(w.dir, "policy.yaml");
    writeFileSync(policy, POLICY);
    return { w, wrap: wrapMirror(w, ["--policy", policy, "--control", join(w.dir, "c.sock"), ...extra]) };
  }

  it("[M17.5] by default as a tool result with isError, which a client returns to its caller: the call never reaches the server", async () => {
    const { w, wrap } = await refusing([]);
    wrap.send(call(1, "rm"));
    expect(await wrap.nextJson()).toMatchObject({
      id: 1,
      result: { isError: true, content: [{ type: "text" }], _meta: { "io.github.aegis-ts/refusal": { layer: "wrap", code: "POLICY_DENIED" } } },
    });
    wrap.end();
    expect((await wrap.finished()).code).toBe(0);
    expect(wrap.stderr).not.toContain("mirror: received tools/call 1 ");
    expect(outcomes(w.audit).map((o) => (o["policy"] as { status: string }).status)).toEqual(["denied"]);
  });

  it("[M17.5] with --refusal reference, as the Rust reference's -32042 error, byte for byte, for each of its codes", async () => {
    const { w, wrap } = await refusing(["--refusal", "reference"]);
    // The frame the reference's README prints for a refused call (its ADR 0015): data.aegis
    // holds layer and code and nothing more; members sorted, no white space.
    const reference = (id: number, code: string): string =>
      `{"error":{"code":-32042,"data":{"aegis":{"code":"${code}","layer":"wrap"}},"message":"aegis wrap refused this tools/call"},"id":${id},"jsonrpc":"2.0"}`;
    wrap.send(call(1, "rm"));
    expect((await wrap.next()).toString("utf8")).toBe(reference(1, "POLICY_DENIED"));
    wrap.send(call(2, "echo", { text: "first" }));
    expect(await wrap.nextJson()).toMatchObject({ id: 2, result: { frame_sha256: sha256(call(2, "echo", { text: "first" })) } });
    wrap.send(call(3, "echo", { text: "second" }));
    expect((await wrap.next()).toString("utf8")).toBe(reference(3, "RATE_LIMITED"));
    wrap.send(call(4, "write_note", { note: "n" }));
    expect((await wrap.next()).toString("utf8")).toBe(reference(4, "PENDING_APPROVAL"));
    // The park's id, which the reference's frame has no room for, is on wrap's stderr.
    await wrap.stderrHas("call to write_note parked for approval ");
    wrap.end();
    expect((await wrap.finished()).code).toBe(0);
    for (const refused of [1, 3, 4]) expect(wrap.stderr).not.toContain(`mirror: received tools/call ${refused} `);
    expect(outcomes(w.audit).map((o) => [o["tool_id"], (o["policy"] as { status: string }).status])).toEqual([
      ["rm", "denied"],
      ["echo", "allowed"],
      ["echo", "rate_limited"],
      ["write_note", "pending_approval"],
    ]);
    expect(await verdictOf(w.audit)).toBe("verified");
  });
});
