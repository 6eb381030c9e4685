import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { endless, fakeControl, type FakeAnswer, type FakeControl } from "../../mcp/test/fake-control.js";
import { BIN, ROOT, STACK_TRACE, type Run } from "./support.js";

/**
 * `aegis approve` against something at the control socket that is no wrap (SPEC §17.5): an
 * answer too big or of the wrong shape ends in `error:` and `help:` and exit 2, never a stack
 * trace; a wrap's answer is still printed. The listener runs in this process, so the CLI runs
 * beside it as a child process that is not waited on synchronously.
 */
function aegis(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, AEGIS_DEBUG: "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.once("error", reject);
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}

const LINE_HASH = "0f".repeat(32);
/** A park as a wrap lists it (SPEC §17.5). */
const PARK = {
  approval_id: "apr-9",
  tool_id: "write_file",
  rule: null,
  parked_at: "2026-01-02T03:04:05.678Z",
  arguments: { code: "none" },
  scope: { tool_id: "write_file", fs: { read_paths: [], write_paths: ["/w/a"] } },
};
const HELP = "help: pass --control with the path aegis wrap printed on its stderr (approvals: control socket ...), while that wrap runs\n";

let listening: FakeControl | undefined;
afterEach(async () => {
  await listening?.close();
  listening = undefined;
});

async function approve(answer: FakeAnswer, ...args: string[]): Promise<Run> {
  listening = await fakeControl(answer);
  return aegis(["approve", ...args, "--control", listening.path]);
}

describe("aegis approve and an answer that is no wrap's (SPEC §17.5)", () => {
  it.each<[string, string[], unknown, string]>([
    ["pending not an array", ["--list"], { ok: true, op: "list", pending: 7 }, "pending: expected an array"],
    ["an empty park", ["--list"], { ok: true, op: "list", pending: [{}] }, "pending[0].approval_id: expected a string"],
    ["an approval of ok and op alone", ["apr-1"], { ok: true, op: "approve" }, "approval_id: expected a string"],
    ["an approval with no seq", ["apr-1"], { ok: true, op: "approve", approval_id: "apr-1", line_hash: LINE_HASH }, "seq: expected an integer from 0 to"],
    ["a refusal of no known code", ["apr-1", "--json"], { ok: false, code: "nope", message: "x" }, "code: expected unknown_approval"],
  ])("%s: error and help, exit 2, no stack trace", async (_, args, answer, detail) => {
    const run = await approve(`${JSON.stringify(answer)}\n`, ...args);
    expect(run.stderr).not.toMatch(STACK_TRACE);
    expect(run.stdout).toBe("");
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^error: .*: the answer is not a control answer \(.*\): is this an aegis wrap control socket\?\n/);
    expect(run.stderr).toContain(`(${detail}`);
    expect(run.stderr.endsWith(HELP)).toBe(true);
  });

  it("an endless answer: the client stops at the bound, error and help, exit 2", async () => {
    const run = await approve(endless(Buffer.alloc(64 * 1024, "[")), "--list");
    expect(run.stderr).not.toMatch(STACK_TRACE);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`error: ${listening?.path}: the answer is over 8388608 bytes: is this an aegis wrap control socket?\n${HELP}`);
  });

  it("what a terminal would act on, in the id, the time or a refusal's message, is printed escaped", async () => {
    const park = { ...PARK, approval_id: "apr-\u001b[2J1", parked_at: "2026-01-02\u202eT03" };
    const list = await approve(`${JSON.stringify({ ok: true, op: "list", pending: [park] })}\n`, "--list");
    expect(list.status).toBe(0);
    expect(list.stdout).toContain("apr-\\u001b[2J1\n");
    expect(list.stdout).toContain("  parked at  2026-01-02\\u202eT03\n");
    await listening?.close();
    const refused = await approve(`${JSON.stringify({ ok: false, code: "unknown_approval", message: "no\u001b]0;x\u0007 such" })}\n`, "apr-1");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("no\\u001b]0;x\\u0007 such");
    for (const text of [list.stdout, list.stderr, refused.stdout, refused.stderr]) expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
  });

  it("a wrap's list and approval are printed as before", async () => {
    const park = { ...PARK, unknown: "ignored" };
    const list = await approve(`${JSON.stringify({ ok: true, op: "list", pending: [park] })}\n`, "--list");
    expect(list.stderr).toBe("");
    expect(list.status).toBe(0);
    expect(list.stdout).toContain('apr-9\n  tool       "write_file"\n  rule       (the Policy Set\'s default)\n');
    expect(list.stdout).toContain('  scope      tool "write_file"\n             write "/w/a"\n');
    await listening?.close();
    const approved = await approve(`${JSON.stringify({ ok: true, op: "approve", approval_id: "apr-9", seq: 4, line_hash: LINE_HASH })}\n`, "apr-9");
    expect(approved.stderr).toBe("");
    expect(approved.status).toBe(0);
    expect(approved.stdout).toBe(`approved apr-9: decision recorded at seq 4 (line_hash ${LINE_HASH})\n`);
    expect(listening?.requests).toEqual(['{"op":"approve","approval_id":"apr-9"}']);
  });
});
