import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { PolicySetHash, repairTornTail, type CallResult } from "@aegis/format";
import { writeKeyFile } from "@aegis/format/internal";
import { EnvelopeStore, openEnvelope, writePack } from "@aegis/envelope";
import { openCheckpointedWriter } from "@aegis/proof";
import { BIN, KEY, call, reachableByOthers, sha256, tempDir } from "./support.js";
import { workspace, wrapMirror, type Recorded, type WrapProcess } from "./wrap-process.js";

/**
 * ADR 0017, SPEC §13.2, §14.2, §17.5, §19.5: everything `aegis wrap` creates that holds or
 * guards evidence or secrets is its owner's alone, whatever the umask it was started under.
 * Run for real, in front of a real server, under the usual umask and under `umask 000`.
 */

const POLICY = ["version: 2", "default: allow", "rules:", "  - id: park-notes", "    action: pending_approval", "    tool: write_note", ""].join("\n");

const modeOf = (path: string): string => (lstatSync(path).mode & 0o777).toString(8).padStart(3, "0");

/** Every file and directory under `dir` (itself included), with its mode. */
function modesUnder(dir: string): Record<string, string> {
  const out: Record<string, string> = { [dir]: modeOf(dir) };
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (lstatSync(path).isDirectory()) Object.assign(out, modesUnder(path));
    else out[path] = modeOf(path);
  }
  return out;
}

/** What each path should be: 700 for a directory, 600 for anything else. */
function privateModes(modes: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(modes).map((path) => [path, lstatSync(path).isDirectory() ? "700" : "600"]));
}

interface Running {
  readonly w: Recorded;
  readonly wrap: WrapProcess;
  readonly evidence: string;
  readonly envelope: string;
  readonly control: string;
  readonly sidecar: string;
}

/** wrap under `umask`, with an Envelope two directories down, a policy (so a control socket) and checkpoints; one call relayed. */
async function startWrap(umask: string): Promise<Running> {
  const w = await workspace();
  // Nothing private by accident: the directory others would look into is open to them.
  chmodSync(w.dir, 0o755);
  const policy = join(w.dir, "policy.yaml");
  writeFileSync(policy, POLICY);
  const evidence = join(w.dir, "evidence");
  const envelope = join(evidence, "session.envelope");
  const wrap = wrapMirror(w, ["--envelope", envelope, "--policy", policy, "--checkpoints"], { shell: `umask ${umask}` });
  await wrap.stderrHas("approvals: control socket");
  const request = call(1, "echo", { text: "a secret the agent sent" });
  wrap.send(request);
  expect(await wrap.nextJson()).toMatchObject({ id: 1, result: { frame_sha256: sha256(request) } });
  const sidecar = `${w.audit}.checkpoint`;
  // The first checkpoint comes a second after the call's Lines are durable.
  await vi.waitFor(() => expect(existsSync(sidecar)).toBe(true), { timeout: 20_000, interval: 100 });
  return { w, wrap, evidence, envelope, control: `${w.audit}.control`, sidecar };
}

describe("aegis wrap creates its files owner-only, whatever the umask (ADR 0017)", () => {
  it.each(["022", "000"])("under umask %s: record, lock, Envelope, checkpoint and control socket, while it runs and after", async (umask) => {
    const { w, wrap, evidence, envelope, control, sidecar } = await startWrap(umask);
    try {
      expect(lstatSync(control).isSocket()).toBe(true);
      const running = { [w.audit]: modeOf(w.audit), [`${w.audit}.lock`]: modeOf(`${w.audit}.lock`), [control]: modeOf(control), [sidecar]: modeOf(sidecar) };
      expect(running).toEqual({ [w.audit]: "600", [`${w.audit}.lock`]: "600", [control]: "600", [sidecar]: "600" });
      const store = modesUnder(evidence);
      // The parent wrap created for the store, the store, its descriptor, lock and segment.
      expect(Object.keys(store).map((p) => p.slice(evidence.length))).toEqual(
        expect.arrayContaining([
          "",
          "/session.envelope",
          "/session.envelope/aegis-envelope",
          "/session.envelope/writer.lock",
          "/session.envelope/00000001.seg",
        ]),
      );
      expect(store).toEqual(privateModes(store));
      // No temporary directory of the socket's binding is left beside it.
      expect(readdirSync(w.dir).filter((n) => n.startsWith(".aegis-"))).toEqual([]);
    } finally {
      wrap.end();
    }
    expect(await wrap.finished()).toEqual({ code: 0, signal: null });
    const after = modesUnder(evidence);
    // The index is written at close.
    expect(Object.keys(after)).toContain(join(envelope, "00000001.idx"));
    expect(after).toEqual(privateModes(after));
    expect({ record: modeOf(w.audit), sidecar: modeOf(sidecar) }).toEqual({ record: "600", sidecar: "600" });
  });

  it("a record and a checkpoint that exist keep the mode they have", async () => {
    const w = await workspace();
    writeFileSync(w.audit, "");
    chmodSync(w.audit, 0o640);
    const sidecar = `${w.audit}.checkpoint`;
    writeFileSync(sidecar, "an older checkpoint\n");
    chmodSync(sidecar, 0o640);
    const wrap = wrapMirror(w, ["--checkpoints"], { shell: "umask 000" });
    wrap.send(call(1, "echo"));
    await wrap.next();
    wrap.end();
    expect(await wrap.finished()).toEqual({ code: 0, signal: null });
    expect({ record: modeOf(w.audit), sidecar: modeOf(sidecar) }).toEqual({ record: "640", sidecar: "640" });
  });
});

const ALLOWED: CallResult = {
  policy: { status: "allowed" },
  capability: { status: "denied", reason: "not evaluated" },
  execution: { status: "success" },
  decision_axes: {},
};

describe("the library creates its files owner-only, whatever the umask (ADR 0017)", () => {
  it.each(["022", "000"])("under umask %s: Chain writer, lock, repair, Envelope store, pack, checkpoints, key file", async (mask) => {
    const before = process.umask(parseInt(mask, 8));
    try {
      const dir = tempDir();
      const store = join(dir, "deep", "er", "store");
      const envelope = await EnvelopeStore.open(store, { segmentBytes: 200 });
      const record = join(dir, "run.aarl");
      const checkpointed = await openCheckpointedWriter(record, { key: KEY, envelope }, { everyMs: 0 });
      const running = { record: modeOf(record), lock: modeOf(`${record}.lock`), storeLock: modeOf(join(store, "writer.lock")) };
      for (const id of ["a", "b", "c"]) {
        // Large enough that the store rotates segments, and writes the sealed ones' indexes.
        await checkpointed.writer.beginCall({ call_id: id, tool_id: "t", policy_set_hash: PolicySetHash.of("p"), request: Buffer.alloc(300, id) });
        await checkpointed.writer.endCall(id, { ...ALLOWED, response: Buffer.alloc(300, id.toUpperCase()) });
      }
      await checkpointed.close();
      const digests: string[] = [];
      for await (const e of envelope.entries()) digests.push(e.digest);
      await envelope.close();
      const pack = join(dir, "out.pack");
      const source = await openEnvelope(store);
      await writePack(source, digests, pack);
      await source.close();
      const torn = join(dir, "torn.aarl");
      writeFileSync(torn, `${readFileSync(record, "utf8")}{"torn":`);
      chmodSync(torn, 0o600);
      const repaired = await repairTornTail(torn);
      if (!repaired.repaired) throw new Error("nothing was repaired");
      const key = join(dir, "keys", "signing.key");
      await writeKeyFile(key, KEY);

      expect(running).toEqual({ record: "600", lock: "600", storeLock: "600" });
      const tree = modesUnder(join(dir, "deep"));
      expect(Object.keys(tree).filter((p) => p.endsWith(".idx")).length).toBeGreaterThan(1);
      expect(tree).toEqual(privateModes(tree));
      expect({
        record: modeOf(record),
        checkpoint: modeOf(`${record}.checkpoint`),
        pack: modeOf(pack),
        side: modeOf(repaired.sidePath),
        keys: modeOf(join(dir, "keys")),
        key: modeOf(key),
      }).toEqual({ record: "600", checkpoint: "600", pack: "600", side: "600", keys: "700", key: "600" });
    } finally {
      process.umask(before);
    }
  });
});

const OTHER = "aegis-test-other";

/** A second local user, made if absent: the test is about what another user can do. */
function otherUser(): void {
  if (spawnSync("id", ["-u", OTHER]).status === 0) return;
  const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER], { encoding: "utf8" });
  if (made.error !== undefined)
    throw new Error(`this test needs a second local user and could not make one: useradd: ${made.error.message} (install the passwd package)`);
  // Another test process may have made it meanwhile.
  if (spawnSync("id", ["-u", OTHER]).status !== 0) throw new Error(`useradd ${OTHER} failed (exit ${String(made.status)}): ${made.stderr}`);
}

/** `argv` run as the other user, bounded: a hang fails the test. */
function asOther(argv: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync("runuser", ["-u", OTHER, "--", ...argv], { encoding: "utf8", timeout: 30_000, env: { ...process.env, AEGIS_DEBUG: "" } });
  if (r.error !== undefined) throw new Error(`runuser -u ${OTHER} -- ${argv.join(" ")}: ${r.error.message}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("another local user, under umask 000 (ADR 0017)", () => {
  it("cannot read the record or the Envelope, nor connect to the control socket; with the modes opened, could", async () => {
    otherUser();
    const { w, wrap, evidence, envelope, control } = await startWrap("000");
    try {
      const segment = join(envelope, "00000001.seg");
      // The owner can.
      expect(spawnSync("cat", [segment], { encoding: "latin1" }).stdout).toContain("a secret the agent sent");
      const listByOwner = spawnSync(process.execPath, [BIN, "approve", "--list", "--control", control], { encoding: "utf8" });
      expect(listByOwner.status, listByOwner.stderr).toBe(0);

      const record = asOther(["cat", w.audit]);
      expect(record.status).not.toBe(0);
      expect(record.stderr).toContain("Permission denied");
      expect(asOther(["ls", envelope]).stderr).toContain("Permission denied");
      const list = asOther([process.execPath, reachableByOthers().bin, "approve", "--list", "--control", control]);
      expect(list.status).toBe(2);
      expect(list.stderr).toContain("permission denied: this user may not connect to the control socket");

      // The directories opened: the segment's own mode still keeps it.
      chmodSync(evidence, 0o755);
      chmodSync(envelope, 0o755);
      const behindMode = asOther(["cat", segment]);
      expect(behindMode.status).not.toBe(0);
      expect(behindMode.stderr).toContain("Permission denied");

      // The test can see a leak: with the modes opened, the same user reads and connects.
      chmodSync(segment, 0o644);
      chmodSync(w.audit, 0o644);
      chmodSync(control, 0o666);
      expect(asOther(["cat", segment]).stdout).toContain("a secret the agent sent");
      expect(asOther(["cat", w.audit]).status).toBe(0);
      const opened = asOther([process.execPath, reachableByOthers().bin, "approve", "--list", "--control", control]);
      expect(opened.status, opened.stderr).toBe(0);
    } finally {
      wrap.end();
    }
    expect(await wrap.finished()).toEqual({ code: 0, signal: null });
  });
});
