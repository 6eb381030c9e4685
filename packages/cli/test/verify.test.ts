import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { SigningKey } from "@aegis/format";
import { beforeAll, describe, expect, it } from "vitest";
import { BIN, GOLDEN, GOLDEN_KEY_ID, GOLDEN_PUBLIC_KEY, STACK_TRACE, aegis, largeRecord, tempDir, vector } from "./support.js";

describe("aegis verify on the reference's golden Session", () => {
  it("prints the reference's three lines byte for byte, unpinned, exit 0", () => {
    const run = aegis(["verify", GOLDEN]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`Verified (unpinned)\nkey_id ${GOLDEN_KEY_ID}\ncoverage session 0 seq 11\n`);
    // Its first intent (call-golden-0) has no outcome, and its Session closed: said beside
    // stdout, which stays the reference's (SPEC §13.4).
    expect(run.stderr).toBe("aegis verify: 1 call never finished before its Session ended (session 0: call-golden-0); `aegis show` lists it\n");
  });

  it("pinned with --key", () => {
    const run = aegis(["verify", "--key", GOLDEN_PUBLIC_KEY, GOLDEN]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`Verified (pinned to ${GOLDEN_KEY_ID})\nkey_id ${GOLDEN_KEY_ID}\ncoverage session 0 seq 11\n`);
  });

  it("pinned with a trust store, comments and blank lines skipped", () => {
    const store = join(tempDir(), "trusted.txt");
    writeFileSync(store, `# the golden signer\n\n  ${GOLDEN_PUBLIC_KEY}  \r\n`);
    const run = aegis(["verify", "--trust-store", store, GOLDEN]);
    expect(run.status).toBe(0);
    expect(run.stdout.split("\n")[0]).toBe(`Verified (pinned to ${GOLDEN_KEY_ID})`);
  });

  it("pinned to another real key: stdout is the reference's, stderr says in plain words whose signature it is", () => {
    const other = SigningKey.fromSeed(new Uint8Array(32).fill(9));
    const otherId = createHash("sha256").update(other.publicKey).digest("hex");
    const run = aegis(["verify", "--key", other.publicKeyHex, GOLDEN]);
    expect(run.status).toBe(1);
    expect(run.stdout.split("\n")[0]).toBe(
      `Tampered: session opened at session 0 seq 0 publishes a key with fingerprint ${GOLDEN_KEY_ID}, which is not in the supplied trust store (--key takes the 64-hex public key, not this fingerprint)`,
    );
    expect(run.stderr).toBe(
      `aegis verify: the record is signed by key_id ${GOLDEN_KEY_ID}, not by the key you gave (key_id ${otherId}): ask its signer for their public key\n`,
    );
    // The signer's key_id given where its public key belongs: said so.
    const mistaken = aegis(["verify", "--key", GOLDEN_KEY_ID, GOLDEN]);
    expect(mistaken.status).toBe(1);
    expect(mistaken.stderr).toContain(`the record is signed by key_id ${GOLDEN_KEY_ID}, which you gave as --key: --key takes the signer's public key`);
    const store = join(tempDir(), "trusted.txt");
    writeFileSync(store, `${other.publicKeyHex}\n`);
    expect(aegis(["verify", "--trust-store", store, GOLDEN]).stderr).toBe(
      `aegis verify: the record is signed by key_id ${GOLDEN_KEY_ID}, not by any key in the trust store: ask its signer for their public key\n`,
    );
  });

  it("a file that holds no record line (a hostname): the reference's verdict, and on stderr that it is not a record", () => {
    const dir = tempDir();
    const hostname = join(dir, "hostname");
    writeFileSync(hostname, "build-host-7\n");
    const run = aegis(["verify", hostname]);
    expect(run.status).toBe(3);
    expect(run.stdout).toBe("Indeterminate: final line 1 does not parse; torn write\n");
    expect(run.stderr).toBe(
      `aegis verify: ${hostname} is not a record: its first line does not begin as a JSON object, and every line of a record is one, from its open Line on\n`,
    );
    // A record whose first line a crash tore is a record: no such word for it.
    const torn = join(dir, "torn.aarl");
    writeFileSync(torn, readFileSync(GOLDEN, "utf8").slice(0, 120));
    const tornRun = aegis(["verify", torn]);
    expect(tornRun.stdout).toBe("Indeterminate: final line 1 does not parse; torn write\n");
    expect(tornRun.stderr).toBe("");
  });

  it("output names no path and no time: the same bytes from any directory", () => {
    expect(aegis(["verify", GOLDEN], { cwd: tempDir() }).stdout).toBe(aegis(["verify", GOLDEN]).stdout);
  });
});

describe("exit codes", () => {
  it("0 Verified", () => expect(aegis(["verify", vector("chains/verified_two_sessions.aarl")]).status).toBe(0));

  it("1 Tampered, with the reason on stdout", () => {
    const run = aegis(["verify", vector("external/rust-aegis/tampered/prev_hash_mismatch.aarl")]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe(
      `Tampered: line at session 0 seq 3 chains to ${"f".repeat(64)}, but the line before it hashes to 9a2c3c9f6c9f58effd1636bbb31c30fad2fcbcbd25ea5d2679c835740370cb9c\nkey_id ${GOLDEN_KEY_ID}\ncoverage session 0 seq 2\n`,
    );
  });

  it("2 the file cannot be read: stdout empty, error on stderr", () => {
    const run = aegis(["verify", join(tempDir(), "no-such.aarl")]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^error: read .*no-such\.aarl: No such file or directory \(os error 2\)\nhelp: /);
  });

  it("3 Indeterminate, with the calls in flight", () => {
    const run = aegis(["verify", vector("external/rust-aegis/indeterminate/unanchored_tail.aarl")]);
    expect(run.status).toBe(3);
    expect(run.stdout).toBe(
      `Indeterminate: session 0 has no close record and nothing anchors beyond it; 1 call(s) in flight\nkey_id ${GOLDEN_KEY_ID}\ncoverage session 0 seq 0\nin_flight call-unanchored-tail\n`,
    );
  });

  it("an empty file: Indeterminate, no key_id or coverage lines", () => {
    const run = aegis(["verify", vector("chains/empty_chain.aarl")]);
    expect(run.status).toBe(3);
    expect(run.stdout).toBe("Indeterminate: no lines to verify\n");
  });
});

describe("bad invocations: exit code, error: on stderr, never a stack trace", () => {
  const dir = tempDir();
  const unreadableDir = join(dir, "a-directory");
  mkdirSync(unreadableDir);
  const emptyStore = join(dir, "empty-store.txt");
  writeFileSync(emptyStore, "# no keys yet\n");
  const badStore = join(dir, "bad-store.txt");
  writeFileSync(badStore, `# ok\n${GOLDEN_PUBLIC_KEY}\n${GOLDEN_KEY_ID.toUpperCase()}\n`);
  const secretStore = join(dir, "secret-store.txt");
  writeFileSync(secretStore, GOLDEN_PUBLIC_KEY);
  chmodSync(secretStore, 0o000);

  const table: [string, string[], number, RegExp][] = [
    ["an unknown flag", ["verify", "--frobnicate", GOLDEN], 1, /^error: unknown flag: --frobnicate\nhelp: usage: aegis verify /],
    [
      "an uppercase hex key",
      ["verify", "--key", GOLDEN_PUBLIC_KEY.toUpperCase(), GOLDEN],
      1,
      /^error: --key needs a 64-hex public key: not a lowercase hex character at position 1\n/,
    ],
    ["a key of the wrong length", ["verify", "--key", "abcd", GOLDEN], 1, /^error: --key needs a 64-hex public key: expected 64 hex characters, got 4\n/],
    ["a missing path", ["verify"], 1, /^error: verify requires <PATH>\n/],
    ["a flag with no value", ["verify", GOLDEN, "--key"], 1, /^error: --key needs a value\n/],
    ["an unreadable file (a directory)", ["verify", unreadableDir], 2, /^error: read .*a-directory: Is a directory \(os error 21\)\n/],
    ["a missing trust store", ["verify", "--trust-store", join(dir, "nope.txt"), GOLDEN], 2, /^error: read trust store .*nope\.txt: No such file or directory/],
    [
      "a bad trust store line",
      ["verify", "--trust-store", badStore, GOLDEN],
      2,
      /^error: trust store .*bad-store\.txt line 3 is not a public key: not a lowercase hex character at position 2\n/,
    ],
    ["an empty trust store", ["verify", "--trust-store", emptyStore, GOLDEN], 1, /^error: trust store .*empty-store\.txt holds no public keys/],
    ["an unknown command, and the nearest", ["verfiy", GOLDEN], 1, /^error: unknown command: verfiy; did you mean verify\?\nhelp: commands: /],
    ["a command near none", ["frobnicate", GOLDEN], 1, /^error: unknown command: frobnicate\nhelp: commands: /],
    ["a mistyped flag, and the nearest", ["verify", "--trust-stor", "x", GOLDEN], 1, /^error: unknown flag: --trust-stor; did you mean --trust-store\?\n/],
    ["an unknown flag among several records: that alone", ["verify", GOLDEN, GOLDEN, "--bogus"], 1, /^error: unknown flag: --bogus\nhelp: /],
    ["a mistyped subcommand", ["envelope", "gett"], 1, /^error: unknown subcommand: envelope gett \(one of [a-z, ]+\); did you mean envelope get\?\n/],
    ["no command", [], 1, /^error: no command given\n/],
    ["keygen without --out", ["keygen"], 1, /^error: keygen requires --out \(where to write the key file/],
    ["show with two paths", ["show", GOLDEN, GOLDEN], 1, /^error: unexpected argument: /],
    ["a value given to a boolean flag", ["verify", "--json=yes", GOLDEN], 1, /^error: --json takes no value \(got "yes"\)\n/],
  ];

  it.each(table)("%s", (_, args, status, stderr) => {
    const run = aegis(args);
    expect(run.status).toBe(status);
    expect(run.stderr).toMatch(/^error: /);
    expect(run.stderr).toMatch(/\nhelp: .+\n/);
    expect(run.stderr).toMatch(stderr);
    expect(run.stderr).not.toMatch(STACK_TRACE);
    expect(run.stdout).not.toMatch(STACK_TRACE);
  });

  it("an empty trust store still pins: stdout is the reference's Tampered verdict", () => {
    const run = aegis(["verify", "--trust-store", emptyStore, GOLDEN]);
    expect(run.stdout).toBe(
      `Tampered: session opened at session 0 seq 0 publishes a key with fingerprint ${GOLDEN_KEY_ID}, which is not in the supplied trust store (--key takes the 64-hex public key, not this fingerprint)\nkey_id ${GOLDEN_KEY_ID}\n`,
    );
  });

  it("a trust store is read before the record, as the reference does", () => {
    const run = aegis(["verify", "--trust-store", join(dir, "nope.txt"), join(dir, "also-missing.aarl")]);
    expect(run.stderr).toMatch(/^error: read trust store /);
  });
});

describe("--json (schema aegis.verify/1, documented in the README)", () => {
  it("pins the whole document for a Verified file", () => {
    const run = aegis(["verify", "--json", "--key", GOLDEN_PUBLIC_KEY, GOLDEN]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      schema: "aegis.verify/1",
      verdict: "verified",
      text: `Verified (pinned to ${GOLDEN_KEY_ID})`,
      reason: null,
      position: null,
      coverage: { session_index: 0, seq: 11 },
      key_ids: [GOLDEN_KEY_ID],
      trust_label: "pinned",
      trust: "pinned",
      pinned: true,
      in_flight: [],
      lines: 12,
      sessions: 1,
      head: "d75bf577774199b56798fb97fc360735d1064bcc67c1c149e62856349ea147ba",
      unfinished_calls: { count: 1, calls: [{ session_index: 0, call_id: "call-golden-0" }] },
      exit_code: 0,
    });
  });

  it("pins the whole document for a Tampered file, with the reason's code, fields and text", () => {
    const run = aegis(["verify", "--json", vector("external/rust-aegis/tampered/key_id_mismatch.aarl")]);
    expect(run.status).toBe(1);
    const doc = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(doc).toEqual({
      schema: "aegis.verify/1",
      verdict: "tampered",
      text: `Tampered: line at session 0 seq 3: line was signed under key dbc298251c51321b7266e78d1c151c2b62aff8cb95b293096d3463018544face, not ${GOLDEN_KEY_ID}`,
      reason: {
        code: "bad_signature",
        at: { session_index: 0, seq: 3 },
        source: { code: "key_mismatch", expected: GOLDEN_KEY_ID, found: "dbc298251c51321b7266e78d1c151c2b62aff8cb95b293096d3463018544face" },
        text: `line at session 0 seq 3: line was signed under key dbc298251c51321b7266e78d1c151c2b62aff8cb95b293096d3463018544face, not ${GOLDEN_KEY_ID}`,
      },
      position: { session_index: 0, seq: 3 },
      coverage: { session_index: 0, seq: 2 },
      key_ids: [GOLDEN_KEY_ID],
      trust_label: "unpinned",
      trust: "unpinned",
      pinned: false,
      in_flight: [],
      lines: 4,
      sessions: 1,
      head: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
      unfinished_calls: { count: 0, calls: [] },
      exit_code: 1,
    });
  });

  it("Indeterminate: in_flight and a Session position", () => {
    const doc = JSON.parse(aegis(["verify", "--json", vector("external/rust-aegis/indeterminate/unanchored_tail.aarl")]).stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({
      verdict: "indeterminate",
      reason: { code: "unanchored_tail", in_flight: ["call-unanchored-tail"] },
      position: { session_index: 0 },
      in_flight: ["call-unanchored-tail"],
      exit_code: 3,
    });
  });

  it("a document with calls in flight, written in parts, is byte for byte JSON.stringify's (two spaces)", () => {
    for (const file of ["external/rust-aegis/indeterminate/unanchored_tail.aarl", "chains/verified_unpinned.aarl"]) {
      const out = aegis(["verify", "--json", vector(file)]).stdout;
      expect(out).toBe(`${JSON.stringify(JSON.parse(out), null, 2)}\n`);
    }
  });

  it("the same answer as the text form", () => {
    for (const file of ["chains/torn_final_line.aarl", "chains/duplicate_decision.aarl", "chains/verified_rotated_pinned.aarl"]) {
      const text = aegis(["verify", vector(file)]);
      const json = aegis(["verify", "--json", vector(file)]);
      expect(json.status).toBe(text.status);
      expect((JSON.parse(json.stdout) as { text: string }).text).toBe(text.stdout.split("\n")[0]);
    }
  });
});

describe("progress", () => {
  const dir = tempDir();
  const big = join(dir, "big.aarl");
  beforeAll(async () => {
    await largeRecord(big, 34_000);
    expect(statSync(big).size).toBeGreaterThan(1 << 24);
  });

  it("nothing on stderr, and nothing on stdout, when stderr is a pipe", () => {
    const run = aegis(["verify", big]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^Verified \(unpinned\)\nkey_id [0-9a-f]{64}\ncoverage session 0 seq 33999\n$/);
  });

  it("on stderr when stderr is a terminal, never on stdout", () => {
    // script(1) gives the child a terminal; stdout is sent to a file so only stderr shows.
    const out = join(dir, "stdout.txt");
    const probe = spawnSync(
      "script",
      ["-qec", `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} verify ${JSON.stringify(big)} > ${JSON.stringify(out)}`, "/dev/null"],
      { encoding: "utf8" },
    );
    // script(1) (util-linux) is on every machine this runs on; its absence must fail, not pass.
    expect(probe.error, "script(1) is needed to give the CLI a terminal").toBeUndefined();
    expect(probe.status).toBe(0);
    expect(probe.stdout).toMatch(/verifying: \d+ MiB of \d+ MiB \(\d+%\)/);
    expect(readFileSync(out, "utf8")).not.toContain("verifying");
  });
});

describe("a record of the reference's earlier format", () => {
  it("says a row with schema_version 1 looks like a version 1 record, which this verifier does not read", () => {
    const mixed = aegis(["verify", vector("chains/malformed_line_schema_version_1.aarl")]);
    expect(mixed.status).toBe(1);
    expect(mixed.stdout).toMatch(/^Tampered: line 4: no line_type\n/);
    expect(mixed.stderr).toContain("aegis verify: line 4 holds schema_version 1: it looks like a version 1 record");
    const old = join(tempDir(), "v1.aarl");
    writeFileSync(old, `${JSON.stringify({ schema_version: 1, kind: "session_open", seq: 0 })}\n`);
    const run = aegis(["verify", old]);
    expect(run.stderr).toContain("aegis verify: line 1 holds schema_version 1");
    expect(aegis(["verify", GOLDEN]).stderr).not.toContain("schema_version 1");
  });
});
