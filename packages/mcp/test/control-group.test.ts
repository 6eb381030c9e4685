import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeKeyFile } from "@aegis/format/internal";
import { describe, expect, it } from "vitest";
import { BIN, KEY, call, reachableByOthers, tempDir } from "./support.js";
import { workspace, wrapMirror, type WrapProcess } from "./wrap-process.js";

/**
 * `aegis wrap --control-group` (SPEC §17.5, ADR 0018) with real accounts: the socket is open to
 * the group's members and to no one else, so an agent running as another user cannot approve
 * its own parked call. The tests run as root; they make (or reuse) a group and two system users.
 */
const GROUP = "aegis-t-approvers";
const APPROVER = "aegis-t-approver";
const AGENT = "aegis-t-agent";
const STACK_TRACE = /^\s+at .+:\d+:\d+\)?$/m;

function run(command: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(command, args, { encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The group with the approver in it and the agent out of it; its gid, and the agent's ids. */
function accounts(): { gid: number; agentUid: number; agentGid: number } {
  if (process.getuid?.() !== 0) throw new Error("these tests make a group and two system users, and run commands as them: run them as root");
  for (const tool of ["groupadd", "useradd", "usermod", "runuser", "getent", "id"]) {
    if (run("sh", ["-c", `command -v ${tool}`]).status !== 0)
      throw new Error(`these tests need ${tool} (Debian: apt-get install passwd util-linux login), to make accounts and run commands as them`);
  }
  // Another run may be making them at the same moment: "exists" (exit 9) is as good as made.
  if (run("getent", ["group", GROUP]).status !== 0) {
    const made = run("groupadd", ["--system", GROUP]);
    if (made.status !== 0 && made.status !== 9) throw new Error(`groupadd ${GROUP}: ${made.stderr}`);
  }
  for (const user of [APPROVER, AGENT]) {
    if (run("id", ["-u", user]).status === 0) continue;
    const made = run("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user]);
    if (made.status !== 0 && made.status !== 9) throw new Error(`useradd ${user}: ${made.stderr}`);
  }
  const joined = run("usermod", ["-a", "-G", GROUP, APPROVER]);
  if (joined.status !== 0) throw new Error(`usermod -a -G ${GROUP} ${APPROVER}: ${joined.stderr}`);
  if (run("id", ["-nG", AGENT]).stdout.split(/\s+/).includes(GROUP)) throw new Error(`${AGENT} is in ${GROUP}; take it out: gpasswd -d ${AGENT} ${GROUP}`);
  const gid = Number(run("getent", ["group", GROUP]).stdout.split(":")[2]);
  return { gid, agentUid: Number(run("id", ["-u", AGENT]).stdout), agentGid: Number(run("id", ["-g", AGENT]).stdout) };
}

/** The real CLI, run as `user`. */
function as(user: string, args: readonly string[]) {
  const r = spawnSync("runuser", ["-u", user, "--", process.execPath, reachableByOthers().bin, ...args], {
    encoding: "utf8",
    env: { ...process.env, AEGIS_DEBUG: "" },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function parkingPolicy(dir: string): string {
  const policy = join(dir, "policy.yaml");
  writeFileSync(policy, "version: 2\ndefault: allow\nrules:\n  - { id: park-notes, action: pending_approval, tool: write_note }\n");
  return policy;
}

async function park(wrap: WrapProcess, args: Record<string, unknown>): Promise<string> {
  wrap.send(call(1, "write_note", args));
  const refusal = (await wrap.nextJson()) as { result: { _meta: Record<string, { code: string; approval_id: string }> } };
  const facts = refusal.result._meta["io.github.aegis-ts/refusal"];
  expect(facts?.code).toBe("PENDING_APPROVAL");
  const approvalId = facts?.approval_id ?? "";
  await wrap.stderrHas(`parked for approval ${approvalId}`);
  return approvalId;
}

describe("aegis wrap --control-group: approvals an agent cannot give itself", () => {
  it("opens the socket to the group's members alone: a member lists and approves; another user is refused and cannot read the record", async () => {
    const { gid } = accounts();
    const w = await workspace();
    // Both users may pass through the directory: the socket's own owner, group and mode decide.
    chmodSync(w.dir, 0o711);
    const control = join(w.dir, "c.sock");
    const wrap = wrapMirror(w, ["--policy", parkingPolicy(w.dir), "--control", control, "--control-group", GROUP]);
    await wrap.stderrHas(`approvals: control socket ${control}, open to group ${gid}\n`);
    const socket = statSync(control);
    expect([socket.isSocket(), socket.mode & 0o777, socket.uid, socket.gid]).toEqual([true, 0o660, 0, gid]);

    const args = { path: join(w.dir, "note.txt"), text: "from the agent" };
    const approvalId = await park(wrap, args);

    // The agent's user: no connection, so no list and no approval.
    const refusedAgent = (): void => {
      for (const attempt of [
        ["approve", "--list", "--control", control],
        ["approve", approvalId, "--control", control],
      ]) {
        const refused = as(AGENT, attempt);
        expect(refused.status).toBe(2);
        expect(refused.stdout).toBe("");
        expect(refused.stderr).toBe(
          `error: ${control}: permission denied: this user may not connect to the control socket\n` +
            "help: the control socket is open to wrap's own user and, with aegis wrap --control-group, to that group's members: approve as one of them (SPEC §17.5)\n",
        );
      }
    };
    refusedAgent();
    // The README's directory: wrap's, which the approvers may pass through and no one else
    // may enter, so that the record and the Envelope are out of the agent's reach too.
    chownSync(w.dir, 0, gid);
    chmodSync(w.dir, 0o710);
    refusedAgent();
    const record = as(AGENT, ["verify", w.audit]);
    expect(record.status).toBe(2);
    expect(record.stderr).toMatch(/^error: read .*record\.aarl: .*permission denied/im);
    expect(record.stderr).not.toMatch(STACK_TRACE);

    // A member of the group: the park is still waiting, shown whole, and theirs to approve.
    const listed = as(APPROVER, ["approve", "--list", "--control", control]);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${approvalId}\n  tool       "write_note"\n`);
    expect(listed.stdout).toContain(`  arguments  {"path":${JSON.stringify(args.path)},"text":"from the agent"}\n`);
    const approved = as(APPROVER, ["approve", approvalId, "--control", control]);
    expect(approved.status, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(new RegExp(`^approved ${approvalId}: decision recorded at seq \\d+`));

    // The retry reaches the server: the mirror answers with the method it received.
    wrap.send(call(2, "write_note", args));
    expect(await wrap.nextJson()).toMatchObject({ id: 2, result: { mirrored: "tools/call" } });
    wrap.end();
    expect((await wrap.finished()).code).toBe(0);
  });

  it("without --control-group the socket is wrap's user's alone (0600): a member of the group is refused too", async () => {
    accounts();
    const w = await workspace();
    chmodSync(w.dir, 0o711);
    const control = join(w.dir, "c.sock");
    const wrap = wrapMirror(w, ["--policy", parkingPolicy(w.dir), "--control", control]);
    await wrap.stderrHas(`approvals: control socket ${control}\n`);
    expect(statSync(control).mode & 0o777).toBe(0o600);
    const refused = as(APPROVER, ["approve", "--list", "--control", control]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("permission denied: this user may not connect to the control socket");
    const owner = spawnSync(process.execPath, [BIN, "approve", "--list", "--control", control], { encoding: "utf8" });
    expect(owner.status, owner.stderr).toBe(0);
    wrap.end();
    await wrap.finished();
  });

  it("refuses to start when wrap's user may not give the socket to the group: exit 1, the reason, no socket left", async () => {
    const { gid, agentUid, agentGid } = accounts();
    const dir = tempDir();
    chownSync(dir, agentUid, agentGid);
    const key = join(dir, "signing.key");
    await writeKeyFile(key, KEY);
    chownSync(key, agentUid, agentGid);
    const control = join(dir, "c.sock");
    const started = spawnSync(
      "runuser",
      [
        "-u",
        AGENT,
        "--",
        process.execPath,
        reachableByOthers().bin,
        "wrap",
        "--audit",
        join(dir, "r.aarl"),
        "--signing-key",
        key,
        "--policy",
        parkingPolicy(dir),
      ]
        // A GID as a number is taken as it is; the agent's user is not in that group.
        .concat(["--control", control, "--control-group", String(gid), "--", process.execPath, reachableByOthers().mirror]),
      { encoding: "utf8", input: "", env: { ...process.env, AEGIS_DEBUG: "" } },
    );
    expect(started.status).toBe(1);
    expect(started.stdout).toBe("");
    expect(started.stderr).toContain(
      `error: control socket ${control}: cannot give the socket to group ${gid}: operation not permitted (wrap's user must be root or a member of the group)\n` +
        "help: run wrap as root or as a member of the --control-group (a user can give a file only to a group it is in), or drop --control-group\n",
    );
    expect(started.stderr).not.toMatch(STACK_TRACE);
    expect(existsSync(control)).toBe(false);
  });
});
