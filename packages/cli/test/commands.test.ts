import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, GOLDEN, STACK_TRACE, aegis, largeRecord, tempDir, vector, type Run } from "./support.js";

describe("aegis keygen", () => {
  it("writes the reference's key file (64 hex + newline, mode 0600) and prints public_key and key_id", () => {
    const path = join(tempDir(), "keys", "signing.key");
    const run = aegis(["keygen", "--out", path]);
    expect(run.status).toBe(0);
    const [pub, id] = run.stdout.split("\n");
    expect(pub).toMatch(/^public_key [0-9a-f]{64}$/);
    const publicKey = (pub ?? "").slice("public_key ".length);
    expect(id).toBe(`key_id ${createHash("sha256").update(Buffer.from(publicKey, "hex")).digest("hex")}`);
    expect(readFileSync(path, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(run.stderr).toContain(`aegis verify --key ${publicKey} <PATH>`);
    // SPEC §13.6: the public key beside it, in the form no signing-key reader takes.
    const pubPath = join(dirname(path), "signing.pub");
    expect(readFileSync(pubPath, "utf8")).toBe(`# aegis ed25519 public key\n${publicKey}\n`);
    expect(statSync(pubPath).mode & 0o777).toBe(0o644);
    expect(run.stderr).toContain(`public key written to ${pubPath}\n`);
  });

  it("refuses to overwrite without --force, and replaces with it", () => {
    const path = join(tempDir(), "signing.key");
    aegis(["keygen", "--out", path]);
    const before = readFileSync(path, "utf8");
    const refused = aegis(["keygen", "--out", path]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^error: key file .* already exists; refusing to overwrite it without --force\nhelp: pass --force/);
    expect(readFileSync(path, "utf8")).toBe(before);
    expect(aegis(["keygen", "--out", path, "--force"]).status).toBe(0);
    expect(readFileSync(path, "utf8")).not.toBe(before);
  });
});

describe("aegis show", () => {
  it("gives every call of the golden Session with its axes, verdicts, rule and digests", () => {
    const run = aegis(["show", GOLDEN]);
    expect(run.status).toBe(0);
    expect(run.stdout.startsWith("Verified (unpinned)\n")).toBe(true);
    for (const expected of [
      "session 0 (line 1)",
      "  call call-golden-1  smoke",
      "    policy      denied: blocked in test",
      "    rule        block-smoke",
      "    axes        capability fs.read, role ops, session sess-golden",
      "    fs          ./notes.md -> /fixtures/notes.md",
      "    execution   not run: not executed",
      "    policy set  89a056813bdf93f95c1881a78793b1a86f5b6bab829c1ba9d20bb4add2aae921",
      "    approval    apr-gate-dream-1: approved, scope tool dream; fs read [/fixtures] write [] at session 0 seq 10",
      "  decision apr-gate-dream-1  session 0 seq 10",
      "    answers     call call-golden-3 (session 0 seq 4)",
      "    execution   resource exceeded: wall_clock",
      "  close  session 0 seq 11",
    ])
      expect(run.stdout).toContain(expected);
    expect(run.stdout.match(/^ {2}call /gm)).toHaveLength(9);
  });

  it("a signed decision of a shape this version does not define is shown, not a crash", async () => {
    const { reseal, readLines, writeSession } = await import("../../format/test/support/chains.js");
    const dir = tempDir();
    const lines = readLines(await writeSession(join(dir, "base.aarl")));
    const odd = lines.map((l) => (l["line_type"] === "decision" ? { ...l, verdict: { verdict: "maybe" } } : l));
    const path = join(dir, "odd.aarl");
    writeFileSync(path, reseal(odd));
    const run = aegis(["show", path]);
    expect(run.status).toBe(0);
    expect(run.stdout.startsWith("Verified (unpinned)\n")).toBe(true);
    expect(run.stdout).toContain("does not fit its type: $.verdict.verdict: expected one of approved, denied");
    expect(run.stdout).toContain("approval    apr-1: no decision in this file");
  });

  it("shows lines of unknown type, not drops them", () => {
    const run = aegis(["show", vector("external/rust-aegis/indeterminate/unknown_line_type.aarl")]);
    expect(run.stdout).toContain("line of unknown type `attestation`  session 0 seq 4");
  });

  it("marks what comes after a break as not verified", () => {
    const run = aegis(["show", vector("chains/chain_broken.aarl")]);
    expect(run.stdout).toMatch(/close {2}session 0 seq 7 {2}\[after the break: not verified\]/);
  });

  it("--call narrows to one call and its approval links; an unknown call is an error", () => {
    const one = aegis(["show", "--call", "call-golden-3", GOLDEN]);
    expect(one.status).toBe(0);
    expect(one.stdout.match(/^ {2}(call|decision) \S+/gm)).toEqual(["  call call-golden-3", "  decision apr-gate-dream-1"]);
    const none = aegis(["show", "--call", "call-nope", GOLDEN]);
    expect(none.status).toBe(1);
    expect(none.stdout).toBe("");
    expect(none.stderr).toMatch(/^error: no call call-nope in this record\nhelp: /);
  });

  it("--json is one document with the verification and every entry", () => {
    const doc = JSON.parse(aegis(["show", "--json", GOLDEN]).stdout) as { schema: string; verification: { verdict: string }; entries: { kind: string }[] };
    expect(doc.schema).toBe("aegis.show/1");
    expect(doc.verification.verdict).toBe("verified");
    // The golden intent has no outcome: it is reported when its Session closes.
    expect(doc.entries.map((e) => e.kind)).toEqual(["session", "call", "call", "call", "call", "call", "call", "call", "call", "decision", "call", "close"]);
  });
});

describe("aegis demo", () => {
  /** A shell line as the user types it where no `aegis` is on PATH (the demo run in a checkout). */
  const shell = (line: string, cwd: string, path = "/usr/local/bin:/usr/bin:/bin"): Run => {
    const ran = spawnSync("sh", ["-c", line], { cwd, encoding: "utf8", env: { ...process.env, PATH: path, AEGIS_DEBUG: "" } });
    return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr };
  };
  const demoIn = (cwd: string, path?: string): Run => shell(`${process.execPath} ${BIN} demo`, cwd, path);

  it("exits 0, writes the record and keys, and every command it prints runs as printed, with the output it shows", () => {
    const cwd = tempDir();
    const run = demoIn(cwd);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(statSync(join(cwd, "aegis-demo/signing.key")).mode & 0o777).toBe(0o600);
    // SPEC §13.6: the public key in a form --signing-key refuses, the key the record is pinned to.
    const [header, publicKey] = readFileSync(join(cwd, "aegis-demo/signing.pub"), "utf8").split("\n");
    expect(header).toBe("# aegis ed25519 public key");
    // No aegis on PATH: the commands say how to run this one, never a bare `aegis` that is not there.
    const invocation = `node ${BIN}`;
    expect(run.stdout).not.toMatch(/^(?:\$ | {2})aegis /m);
    expect(run.stdout).toContain(`${invocation} verify --key ${publicKey} `);
    expect(run.stdout).toMatch(/^Verified \(pinned to [0-9a-f]{64}\)$/m);
    expect(run.stdout).toMatch(/^Tampered: line at session 0 seq 2: signature does not match this line$/m);

    // Each `$ command` and the lines after it: the command's real stdout, word for word.
    const transcripts = [...run.stdout.matchAll(/^\$ (.+)\n((?:.+\n)+)/gm)];
    expect(transcripts.map((t) => (t[1] ?? "").split(" ").slice(2, 4).join(" "))).toEqual(["verify --key", "verify --key", "proof verify"]);
    for (const [, command, shown] of transcripts) {
      const real = shell(command ?? "", cwd);
      expect(real.stdout, command).toBe(shown);
      expect(real.status, command).toBe(command?.endsWith("session-tampered.aarl") ? 1 : 0);
    }

    const printed = [...run.stdout.matchAll(/^ {2}(node .+)$/gm)].map((m) => m[1] ?? "");
    const named = (words: string): string => printed.find((line) => line.startsWith(`${invocation} ${words}`)) ?? `(no ${words} printed)`;
    const stranger = shell(named(`verify --key ${publicKey} aegis-demo/session.aarl`), cwd);
    expect(stranger.status).toBe(0);
    expect(stranger.stdout).toMatch(/^Verified \(pinned to /);
    const approval = /parked for approval (apr-[0-9a-f-]{36}) \(rule park-shell\)/.exec(run.stdout)?.[1] ?? "no park";
    for (const verdict of [
      "allowed (rule read-workspace) -> success",
      "denied: no matching rule (default deny)",
      `allowed under approval ${approval} -> success`,
    ]) {
      expect(run.stdout).toContain(verdict);
    }
    // The operator's commands it prints work too: the stricter set changes exactly the two shell calls,
    // and every request and response the record names is in the Envelope.
    const recheck = shell(named("recheck "), cwd);
    expect(recheck.stdout).toMatch(/^call call-4 session 0 seq \d+: newly_blocked was=pending_approval now=denied$/m);
    expect(recheck.stdout).toMatch(/^call call-5 session 0 seq \d+: newly_blocked was=allowed now=denied$/m);
    expect(recheck.stdout.match(/: unchanged /g)).toHaveLength(4);
    expect(recheck.status).toBe(1);
    const envelope = shell(named("envelope verify "), cwd);
    expect(envelope.stdout).toMatch(/\nenvelope: 8 present, 0 missing, 0 digest_mismatch, 0 redacted \(of 8 digests the record names\)\n$/);
    expect(envelope.status).toBe(0);
    // Under the very set that decided them, every call is unchanged.
    const same = aegis(["recheck", "--require-verified", "--policy", join(cwd, "aegis-demo/policy.yaml"), join(cwd, "aegis-demo/session.aarl")]);
    expect(same.stdout.match(/: unchanged /g)).toHaveLength(6);
    expect(same.status).toBe(0);
    // The proofs of the parked call, checked as the stranger it names would, with the key alone
    // (the shell expands the glob); and the record held to its checkpoint.
    const proofCheck = shell(named("proof verify "), cwd);
    expect(proofCheck.status).toBe(0);
    expect(proofCheck.stdout.match(/: OK: Line \d+ of 15 in aegis\.invalid\/record\/[0-9a-f]{64}: /g)).toHaveLength(3);
    expect(proofCheck.stdout).toMatch(/decision on apr-[0-9a-f-]{36}: approved \(signed\)/);
    const heldToCheckpoint = shell(named(`verify --key ${publicKey} --checkpoint `), cwd);
    expect(heldToCheckpoint.status).toBe(0);
    expect(heldToCheckpoint.stdout).toMatch(/: matches the record's first lines\n$/);
    const report = shell(named("report "), cwd);
    expect(report.status, report.stderr).toBe(0);
    expect(statSync(join(cwd, "aegis-demo/report.html")).size).toBeGreaterThan(0);
  });

  it("prints `aegis` when the aegis on PATH is this one, and not when it is another program", () => {
    const bin = join(tempDir(), "bin");
    mkdirSync(bin);
    symlinkSync(BIN, join(bin, "aegis"));
    const mine = demoIn(tempDir(), `${bin}:/usr/local/bin:/usr/bin:/bin`);
    expect(mine.status).toBe(0);
    expect(mine.stdout).toMatch(/^ {2}aegis verify --key [0-9a-f]{64} aegis-demo\/session\.aarl$/m);
    const other = join(tempDir(), "bin");
    mkdirSync(other);
    writeFileSync(join(other, "aegis"), "#!/bin/sh\necho not this aegis\n", { mode: 0o755 });
    const theirs = demoIn(tempDir(), `${other}:/usr/local/bin:/usr/bin:/bin`);
    expect(theirs.stdout).not.toMatch(/^ {2}aegis /m);
    expect(theirs.stdout).toMatch(/^ {2}node \S+ verify --key /m);
  });

  it("runs again over its own directory only with --force (its key would be replaced), and refuses a directory it did not make", () => {
    const cwd = tempDir();
    expect(aegis(["demo"], { cwd }).status).toBe(0);
    const key = readFileSync(join(cwd, "aegis-demo", "signing.key"), "utf8");
    const again = aegis(["demo"], { cwd });
    expect(again.status).toBe(2);
    expect(again.stderr).toContain("an earlier demo's directory: running again would replace its record and its signing key; pass --force");
    expect(readFileSync(join(cwd, "aegis-demo", "signing.key"), "utf8")).toBe(key);
    expect(aegis(["demo", "--force"], { cwd }).status).toBe(0);
    expect(readFileSync(join(cwd, "aegis-demo", "signing.key"), "utf8")).not.toBe(key);
    const other = join(cwd, "mine");
    aegis(["keygen", "--out", join(other, "precious.key")]);
    const refused = aegis(["demo", "--out", other], { cwd });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^error: cannot use .*mine: the directory is not empty and was not made by aegis demo\n/);
    expect(readFileSync(join(other, "precious.key"), "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
  });
});

describe("--quiet: the exit code alone", () => {
  it("verify, recheck, proof verify and vectors print nothing on stdout with -q or --quiet, and exit as without it", () => {
    const cwd = tempDir();
    expect(aegis(["demo"], { cwd }).status).toBe(0);
    const demo = join(cwd, "aegis-demo");
    const at = (name: string): string => join(demo, name);
    const publicKey = readFileSync(at("signing.pub"), "utf8").trim().split("\n").at(-1) ?? "";
    const proofs = join(demo, "proofs");
    const cases: [string[], number][] = [
      [["verify", "--trust-store", at("signing.pub"), at("session.aarl")], 0],
      [["verify", "--json", at("session-tampered.aarl")], 1],
      [["recheck", "--trust-store", at("signing.pub"), "--policy", at("policy-stricter.yaml"), "--envelope", at("session.envelope"), at("session.aarl")], 1],
      [["proof", "verify", "--key", publicKey, ...readdirSync(proofs).map((f) => join(proofs, f))], 0],
      [["vectors", vector("")], 0],
    ];
    for (const [args, status] of cases) {
      const loud = aegis(args);
      expect(loud.status, args.join(" ")).toBe(status);
      expect(loud.stdout).not.toBe("");
      for (const flag of ["-q", "--quiet"]) {
        const quiet = aegis([...(args[0] === "proof" ? ["proof", "verify", flag, ...args.slice(2)] : [args[0] ?? "", flag, ...args.slice(1)])]);
        expect(quiet.status, `${flag} ${args.join(" ")}`).toBe(status);
        expect(quiet.stdout, `${flag} ${args.join(" ")}`).toBe("");
      }
    }
  }, 120_000);
});

describe("help and version", () => {
  it.each([
    "verify",
    "recheck",
    "keygen",
    "repair",
    "show",
    "demo",
    "vectors",
    "envelope verify",
    "envelope get",
    "envelope redact",
    "envelope pack",
    "envelope expire",
  ])("aegis %s --help prints usage with examples to stdout, exit 0", (command) => {
    const run = aegis([...command.split(" "), "--help"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`$ aegis ${command}`);
    expect(run.stdout).toContain("Examples");
    expect(run.stdout).not.toContain("#0");
  });

  it("aegis --help lists every command; --version prints the version", () => {
    const help = aegis(["--help"]);
    expect(help.status).toBe(0);
    for (const command of [
      "verify",
      "recheck",
      "keygen",
      "repair",
      "show",
      "demo",
      "vectors",
      "envelope verify",
      "envelope get",
      "envelope redact",
      "envelope pack",
      "envelope expire",
    ])
      expect(help.stdout).toContain(`aegis ${command}`);
    const version = aegis(["--version"]);
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`${(JSON.parse(readFileSync(join(BIN, "../../package.json"), "utf8")) as { version: string }).version}\n`);
  });

  it("a record that is not a record: verify says Tampered, show reports it, no stack trace", () => {
    const path = join(tempDir(), "garbage.aarl");
    writeFileSync(path, Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x7b, 0x0a]));
    const verify = aegis(["verify", path]);
    expect(verify.status).toBe(1);
    expect(verify.stdout).toBe("Tampered: line 1: not JSON: stream did not contain valid UTF-8\n");
    const show = aegis(["show", path]);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain("line 1 cannot be read: not JSON: stream did not contain valid UTF-8");
    for (const run of [verify, show]) {
      expect(run.stderr).not.toMatch(STACK_TRACE);
      expect(run.stdout).not.toMatch(STACK_TRACE);
    }
  });

  it("a reader that goes away (show | head) ends the output quietly", async () => {
    const path = join(tempDir(), "many.aarl");
    await largeRecord(path, 4000);
    const child = spawn(process.execPath, [BIN, "show", path], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    child.stdout.destroy();
    const status = await new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    expect(stderr).toBe("");
    expect(status).toBe(0);
  });
});
