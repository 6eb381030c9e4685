import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STACK_TRACE, aegis, tempDir } from "./support.js";

/** What a user can get wrong on `aegis wrap`'s and `aegis approve`'s command lines, through the real binary. */
describe("aegis wrap and aegis approve: bad invocations", () => {
  const dir = tempDir();
  const key = join(dir, "signing.key");
  aegis(["keygen", "--out", key]);
  const audit = join(dir, "record.aarl");
  const badPolicy = join(dir, "bad.yaml");
  writeFileSync(badPolicy, "version: 1\nrules: [ { id: x } ]\n");

  const wrap = (...args: string[]) => aegis(["wrap", "--audit", audit, "--signing-key", key, ...args]);

  it.each([
    ["no server to start", ["wrap", "--audit", audit, "--signing-key", key], "wrap needs the server: -- <CMD> [ARGS...] to start one, or --url <URL>"],
    [
      "a command and a URL",
      ["wrap", "--audit", audit, "--signing-key", key, "--url", "http://127.0.0.1:1/mcp", "--", "true"],
      "give the server after -- or with --url, not both",
    ],
    [
      "a credential on the command line",
      ["wrap", "--audit", audit, "--signing-key", key, "--url", "http://127.0.0.1:1/mcp", "--header", "Authorization: Bearer s3cret"],
      "--header Authorization puts a credential on the command line",
    ],
    [
      "--header without --url",
      ["wrap", "--audit", audit, "--signing-key", key, "--header", "X-A: 1", "--", "true"],
      "--header and --header-env are read only with --url",
    ],
    [
      "--header-env naming a variable that is not set",
      ["wrap", "--audit", audit, "--signing-key", key, "--url", "http://127.0.0.1:1/mcp", "--header-env", "Authorization:AEGIS_TEST_UNSET_TOKEN"],
      "the environment variable AEGIS_TEST_UNSET_TOKEN is not set",
    ],
    ["--listen that is not HOST:PORT", ["wrap", "--audit", audit, "--signing-key", key, "--listen", "8808", "--", "true"], "--listen takes HOST:PORT"],
    [
      "--listen off loopback without a token",
      ["wrap", "--audit", audit, "--signing-key", key, "--listen", "0.0.0.0:8808", "--", "true"],
      "listening on 0.0.0.0, off loopback, needs a bearer token",
    ],
    ["an empty program name", ["wrap", "--audit", audit, "--signing-key", key, "--", ""], "wrap needs the server to start after --"],
    ["no --audit", ["wrap", "--signing-key", key, "--", "true"], "--audit"],
    [
      "--bindings without --policy",
      ["wrap", "--audit", audit, "--signing-key", key, "--bindings", "b.yaml", "--", "true"],
      "--bindings is read only with --policy",
    ],
    ["--role without --policy", ["wrap", "--audit", audit, "--signing-key", key, "--role", "agent", "--", "true"], "--role is read only with --policy"],
    [
      "--control-group without --policy",
      ["wrap", "--audit", audit, "--signing-key", key, "--control-group", "approvers", "--", "true"],
      "--control-group is read only with --policy",
    ],
    [
      "a grant without --confine",
      ["wrap", "--audit", audit, "--signing-key", key, "--allow-read", "/srv", "--allow-exec-support", "--", "true"],
      "--allow-read, --allow-exec-support are read only with --confine",
    ],
    [
      "--confine with --url",
      ["wrap", "--audit", audit, "--signing-key", key, "--confine", "--url", "http://127.0.0.1:1/mcp"],
      "--confine holds a server wrap starts: with --url there is no process to hold",
    ],
    [
      "a grant of the host's /proc",
      ["wrap", "--audit", audit, "--signing-key", key, "--confine", "--allow-read", "/proc/self", "--", "true"],
      "--allow-read /proc/self: /proc is never granted from the host",
    ],
    [
      "a grant of a path that is not there",
      ["wrap", "--audit", audit, "--signing-key", key, "--confine", "--allow-read", "/nonexistent/aegis-t", "--", "true"],
      "--allow-read /nonexistent/aegis-t: ",
    ],
    [
      "--allow-net that is not HOST:PORT",
      ["wrap", "--audit", audit, "--signing-key", key, "--confine", "--allow-net", "example.com", "--", "true"],
      "--allow-net takes HOST:PORT",
    ],
    [
      "a --refusal style wrap does not know",
      ["wrap", "--audit", audit, "--signing-key", key, "--refusal", "error", "--", "true"],
      '--refusal takes tool-result or reference, not "error"',
    ],
    ["approve without an id", ["approve", "--control", "x.sock"], "approve requires <APPROVAL_ID> (or --list)"],
    ["a denial without a reason", ["approve", "apr-1", "--deny", "--control", "x.sock"], "--deny needs --reason <TEXT>"],
    ["approve without a socket", ["approve", "apr-1"], "approve needs --control <PATH>"],
  ])("%s: exit 1, error: and help:, no stack trace", (_name, args, message) => {
    const run = aegis(args);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`error: `);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toMatch(/^help: /m);
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });

  it("a key file that is not there, a Policy Set that does not parse, a program that does not exist: exit 1, nothing started", () => {
    const missingKey = aegis(["wrap", "--audit", audit, "--signing-key", join(dir, "nope.key"), "--", "true"]);
    expect(missingKey.status).toBe(1);
    expect(missingKey.stderr).toMatch(/^error: .*nope\.key/m);
    const policy = wrap("--policy", badPolicy, "--", "true");
    expect(policy.status).toBe(1);
    expect(policy.stderr).toMatch(/^error: policy parse error: rules\[0\]\.action: required/m);
    expect(existsSync(audit)).toBe(false);
    const program = wrap("--", join(dir, "no-such-server"));
    expect(program.status).toBe(1);
    expect(program.stderr).toContain(`error: could not start ${join(dir, "no-such-server")}: no such program (is it on PATH?)`);
    for (const run of [missingKey, policy, program]) expect(run.stderr).not.toMatch(STACK_TRACE);
  });

  it("a server that is not there appends nothing to the record: no empty Session, new file or old", () => {
    const fresh = join(tempDir(), "fresh.aarl");
    const missing = aegis(["wrap", "--audit", fresh, "--signing-key", key, "--", "/no/such/server"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("error: could not start /no/such/server: no such program (is it on PATH?)");
    expect(existsSync(fresh)).toBe(false);
    // A record that already holds a Session keeps its bytes, whether the name is a path or one to find on PATH.
    const kept = join(tempDir(), "kept.aarl");
    aegis(["wrap", "--audit", kept, "--signing-key", key, "--", "true"]);
    const before = readFileSync(kept);
    for (const server of ["/no/such/server", "no-such-server-on-path", "."]) {
      const run = aegis(["wrap", "--audit", kept, "--signing-key", key, "--", server]);
      expect(run.status, server).toBe(1);
      expect(run.stderr).toContain(`error: could not start ${server}: no such program (is it on PATH?)`);
    }
    expect(readFileSync(kept).equals(before)).toBe(true);
  });

  it("a lock a killed wrap left is recovered, and wrap says so; a torn record names aegis repair", async () => {
    const record = join(tempDir(), "killed.aarl");
    const gone = { pid: 2 ** 22 + 12345, host: (await import("node:os")).hostname() };
    writeFileSync(`${record}.lock`, JSON.stringify(gone));
    const run = aegis(["wrap", "--audit", record, "--signing-key", key, "--", "true"]);
    expect(run.stderr).toContain(`aegis wrap: recovered the lock on ${record}: left by pid ${gone.pid} on ${gone.host}, which no longer runs\n`);
    writeFileSync(record, '{"schema_version":2,"line_type":"op', { flag: "a" });
    const torn = aegis(["wrap", "--audit", record, "--signing-key", key, "--", "true"]);
    expect(torn.status).toBe(1);
    expect(torn.stderr).toContain(`help: run \`aegis repair ${record}\` first: a crash left its last line torn\n`);
  });

  it("approve with no wrap at the socket: exit 2, and how to find the right one", () => {
    const run = aegis(["approve", "apr-1", "--control", join(dir, "nobody.sock")]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("no aegis wrap is listening there");
    expect(run.stderr).toContain("help: pass --control with the path aegis wrap printed");
  });

  it("a --control-group that names no group, or too large a GID, is refused before anything starts: exit 1", () => {
    writeFileSync(join(dir, "ok.yaml"), "version: 1\nrules: []\n");
    const record = join(dir, "grouped.aarl");
    for (const [group, detail] of [
      ["no-such-group-aegis", "no group of that name in /etc/group"],
      ["4294967295", "a group id is at most 4294967294"],
    ] as const) {
      const run = aegis(["wrap", "--audit", record, "--signing-key", key, "--policy", join(dir, "ok.yaml"), "--control-group", group, "--", "true"]);
      expect(run.status).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toBe(
        `error: --control-group ${group}: ${detail}\nhelp: name a group in /etc/group, or give its numeric GID: its members will be able to approve parked calls (SPEC §17.5)\n`,
      );
    }
    expect(existsSync(record)).toBe(false);
  });

  it("a control socket path too long for a Unix socket is refused before the server starts", () => {
    writeFileSync(join(dir, "ok.yaml"), "version: 1\nrules: []\n");
    const run = wrap("--policy", join(dir, "ok.yaml"), "--control", join(dir, "x".repeat(120)), "--", "true");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("a Unix socket path holds at most 107 bytes");
    expect(run.stderr).toMatch(/^help: pass --control <PATH>/m);
  });
});
