import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { RecordWriter, RequestDigest, ResponseDigest } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { EnvelopeStore } from "@aegis/envelope";
import { decide, parsePolicySet } from "@aegis/policy";
import { STACK_TRACE, aegis, tempDir } from "./support.js";

/**
 * `aegis envelope ...`, `verify --envelope` and `recheck --envelope`, as child processes, on
 * records our writer wrote with a real Envelope store.
 */
const POLICY_YAML = [
  "version: 2",
  "default: allow",
  "rules:",
  "  - id: no-force-push",
  "    action: deny",
  "    tool: git.push",
  "    args: [{ pointer: /force, exact: true }]",
  "",
].join("\n");
const POLICY = parsePolicySet(POLICY_YAML);
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const REQUESTS = {
  c1: '{"branch":"main","force":false,"n":"c1-unique"}',
  c2: '{"branch":"dev","force":false,"n":"c2-unique"}',
  c3: '{"branch":"x","force":true,"n":"c3-unique"}',
} as const;

interface Fixture {
  readonly dir: string;
  readonly record: string;
  readonly store: string;
  readonly policy: string;
}

/** Three calls decided by POLICY (which reads the request bytes), recorded with their bytes kept. */
async function writeFixture(): Promise<Fixture> {
  const dir = tempDir();
  const record = join(dir, "session.aarl");
  const store = join(dir, "session.envelope");
  const policy = join(dir, "policy.yaml");
  writeFileSync(policy, POLICY_YAML);
  const envelope = await EnvelopeStore.open(store);
  const writer = await RecordWriter.open(record, { key: insecureDevKey(), allowInsecureDevKey: true, envelope });
  for (const [id, text] of Object.entries(REQUESTS)) {
    const request = bytes(text);
    const d = decide(POLICY, { tool_id: "git.push", axes: { role: "ops" }, request });
    await writer.beginCall({ call_id: id, tool_id: "git.push", policy_set_hash: d.policy_set_hash, request });
    await writer.endCall(id, {
      policy: d.policy,
      capability: { status: "denied", reason: "n/a" },
      execution: { status: "success" },
      decision_axes: d.decision_axes,
      response: bytes(`pushed ${id}`),
    });
  }
  await writer.close();
  await envelope.close();
  return { dir, record, store, policy };
}

/** Change one byte of the stored copy of `needle` in the store's segment files. */
function alterStored(store: string, needle: string): void {
  for (const name of readdirSync(store).filter((n) => n.endsWith(".seg"))) {
    const path = join(store, name);
    const data = readFileSync(path);
    const at = data.indexOf(needle);
    if (at === -1) continue;
    data[at] = (data[at] ?? 0) ^ 0x20;
    writeFileSync(path, data);
    return;
  }
  throw new Error(`${needle} is not stored`);
}

const digestOf = (id: keyof typeof REQUESTS): string => RequestDigest.of(bytes(REQUESTS[id]));

let fresh: Fixture;
beforeAll(async () => {
  fresh = await writeFixture();
});

describe("aegis envelope verify", () => {
  it("finds every request and response the record names: exit 0", () => {
    const run = aegis(["envelope", "verify", "--envelope", fresh.store, fresh.record]);
    expect(run.stdout).toContain(`call c1 session 0 seq 1 request ${digestOf("c1")}: present (${REQUESTS.c1.length} bytes)\n`);
    expect(run.stdout).toContain(`call c1 session 0 seq 2 response ${ResponseDigest.of(bytes("pushed c1"))}: present (9 bytes)\n`);
    expect(run.stdout).toMatch(/\nenvelope: 6 present, 0 missing, 0 digest_mismatch, 0 redacted \(of 6 digests the record names\)\n$/);
    expect(run.status).toBe(0);
  });

  it("an altered stored byte is digest_mismatch with what it hashes to: exit 1; verify --envelope keeps the verdict's exit code", async () => {
    const f = await writeFixture();
    alterStored(f.store, "c2-unique");
    const run = aegis(["envelope", "verify", "--envelope", f.store, f.record]);
    expect(run.stdout).toMatch(new RegExp(`call c2 session 0 seq 3 request ${digestOf("c2")}: digest_mismatch found=[0-9a-f]{64}\\n`));
    expect(run.stdout).toContain("envelope: 5 present, 0 missing, 1 digest_mismatch, 0 redacted");
    expect(run.status).toBe(1);
    const json = JSON.parse(aegis(["envelope", "verify", "--json", "--envelope", f.store, f.record]).stdout) as {
      summary: { digest_mismatch: number };
      exit_code: number;
    };
    expect(json).toMatchObject({ summary: { digest_mismatch: 1 }, exit_code: 1 });
    const verify = aegis(["verify", "--envelope", f.store, f.record]);
    expect(verify.stdout).toMatch(
      /^Verified \(unpinned\)\n[\s\S]*\nenvelope: 5 present, 0 missing, 1 digest_mismatch, 0 redacted \(of 6 digests the record names\)\n$/,
    );
    expect(verify.status).toBe(0);
  });

  it("a damaged frame is reported with its file and byte offset, and the entries around it are still read: exit 2", async () => {
    const f = await writeFixture();
    // Without indexes the store is scanned, so the damage is found on open.
    for (const name of readdirSync(f.store).filter((n) => n.endsWith(".idx"))) rmSync(join(f.store, name));
    const segment = join(f.store, readdirSync(f.store).find((n) => n.endsWith(".seg")) ?? "none");
    const data = readFileSync(segment);
    const value = data.indexOf("c2-unique");
    // The 36 bytes before a value are its frame's head (SPEC §14): spoil them, so the frame no longer checks.
    data.fill(0xee, value - 36, value);
    writeFileSync(segment, data);
    const run = aegis(["envelope", "verify", "--envelope", f.store, f.record]);
    expect(run.stderr).toMatch(new RegExp(`^error: ${segment.replaceAll("/", "\\/")}: damaged frame at byte \\d+ \\(\\d+ bytes skipped\\)`, "m"));
    expect(run.stdout).toContain(`request ${digestOf("c1")}: present`);
    expect(run.stdout).toContain(`request ${digestOf("c3")}: present`);
    expect(run.stdout).toContain(`request ${digestOf("c2")}: missing`);
    expect(run.stdout).toContain("envelope: 5 present, 1 missing, 0 digest_mismatch, 0 redacted");
    expect(run.status).toBe(2);
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });
});

describe("aegis envelope get and redact", () => {
  it("get writes exactly the bytes received; a digest that is not 64 lowercase hex is a usage error", () => {
    const run = aegis(["envelope", "get", "--envelope", fresh.store, digestOf("c1")]);
    expect(run.stdout).toBe(REQUESTS.c1);
    expect(run.status).toBe(0);
    const bad = aegis(["envelope", "get", "--envelope", fresh.store, digestOf("c1").toUpperCase()]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^error: DIGEST must be 64 lowercase hex: .*\nhelp: /);
    const missing = aegis(["envelope", "get", "--envelope", fresh.store, "0".repeat(64)]);
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(/^error: missing: 0{64}: /);
  });

  it("redact removes the bytes and keeps a tombstone; the record still verifies; get says redacted, when and why", async () => {
    const f = await writeFixture();
    const run = aegis(["envelope", "redact", "--envelope", f.store, "--reason", "token in arguments", digestOf("c3")]);
    expect(run.stdout).toMatch(new RegExp(`^redacted ${digestOf("c3")} at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: removed ${REQUESTS.c3.length} bytes\\n$`));
    expect(run.status).toBe(0);
    for (const name of readdirSync(f.store)) expect(readFileSync(join(f.store, name)).includes("c3-unique"), name).toBe(false);
    const get = aegis(["envelope", "get", "--envelope", f.store, digestOf("c3")]);
    expect(get.status).toBe(1);
    expect(get.stderr).toMatch(/^error: redacted: [0-9a-f]{64}: its bytes were removed at .*: token in arguments\n/);
    expect(aegis(["verify", f.record]).status).toBe(0);
    const verify = aegis(["envelope", "verify", "--envelope", f.store, f.record]);
    expect(verify.stdout).toContain(`request ${digestOf("c3")}: redacted at `);
    expect(verify.status).toBe(0);
    expect(aegis(["envelope", "redact", "--envelope", f.store, "--reason", "again", digestOf("c3")]).stdout).toContain("was already redacted");
    expect(aegis(["envelope", "redact", "--envelope", f.store, "--reason", "x", "1".repeat(64)]).status).toBe(1);
  });
});

describe("aegis envelope pack", () => {
  it("packs only the entries of the calls named; the pack is an Envelope a stranger can read", async () => {
    const out = join(tempDir(), "c1.pack");
    const run = aegis(["envelope", "pack", "--envelope", fresh.store, "--out", out, "--call", "c1", fresh.record]);
    expect(run.stdout).toBe(`packed 2 entries and 0 tombstones (${readFileSync(out).length} bytes) into ${out}\n`);
    expect(run.status).toBe(0);
    const verify = aegis(["envelope", "verify", "--envelope", out, fresh.record]);
    expect(verify.stdout).toContain("envelope: 2 present, 4 missing, 0 digest_mismatch, 0 redacted");
    expect(verify.status).toBe(0);
    expect(aegis(["envelope", "get", "--envelope", out, digestOf("c1")]).stdout).toBe(REQUESTS.c1);
    const again = aegis(["envelope", "pack", "--envelope", fresh.store, "--out", out, fresh.record]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/^error: .*c1\.pack already exists\n/);
    const unknown = aegis(["envelope", "pack", "--envelope", fresh.store, "--out", join(tempDir(), "x.pack"), "--call", "nope", fresh.record]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/^error: no call nope in this record\n/);
  });

  it("an Envelope path that is neither a store nor a pack is exit 2, no stack trace", () => {
    const run = aegis(["envelope", "verify", "--envelope", fresh.record, fresh.record]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^error: .* is not an Envelope: .*\nhelp: /);
    expect(run.stderr).not.toMatch(STACK_TRACE);
    expect(aegis(["envelope"]).stderr).toMatch(/^error: envelope needs a subcommand: verify, get, redact, pack, expire\n/);
  });
});

describe("aegis recheck --envelope: argument matchers read the request bytes (SPEC §16.3)", () => {
  it("one entry redacted, one altered, one intact: missing_envelope, envelope_digest_mismatch, unchanged", async () => {
    const f = await writeFixture();
    expect(aegis(["recheck", "--policy", f.policy, "--envelope", f.store, f.record]).stdout).toBe(
      "call c1 session 0 seq 2: unchanged allowed\ncall c2 session 0 seq 4: unchanged allowed\ncall c3 session 0 seq 6: unchanged denied\n",
    );
    expect(aegis(["envelope", "redact", "--envelope", f.store, "--reason", "test", digestOf("c1")]).status).toBe(0);
    alterStored(f.store, "c2-unique");
    const run = aegis(["recheck", "--policy", f.policy, "--envelope", f.store, f.record]);
    expect(run.stdout).toBe(
      "call c1 session 0 seq 2: indeterminate missing_envelope\ncall c2 session 0 seq 4: indeterminate envelope_digest_mismatch\ncall c3 session 0 seq 6: unchanged denied\n",
    );
    expect(run.status).toBe(3);
    // Without the Envelope, a set that needs it cannot decide any call.
    const without = aegis(["recheck", "--policy", f.policy, f.record]);
    expect(without.stdout.match(/indeterminate missing_envelope/g)).toHaveLength(3);
    expect(existsSync(f.store)).toBe(true);
  });
});

describe("aegis envelope verify --full: damage under a valid index", () => {
  it("an altered entry the record does not name: unseen without --full, found with it (exit 1, file and offset)", async () => {
    const f = await writeFixture();
    const extra = await EnvelopeStore.open(f.store);
    const digest = await extra.putRequest(bytes("an entry no record names, extra-unique"));
    await extra.close();
    alterStored(f.store, "extra-unique");
    const plain = aegis(["envelope", "verify", "--envelope", f.store, f.record]);
    expect(plain.status).toBe(0);
    const full = aegis(["envelope", "verify", "--full", "--envelope", f.store, f.record]);
    expect(full.stdout).toMatch(new RegExp(`\\nfull: ${digest} digest_mismatch found=[0-9a-f]{64} at .*\\.seg byte \\d+\\n`));
    expect(full.stdout).toMatch(/\nfull: \d+ entries read, \d+ verified, 1 mismatched, /);
    expect(full.status).toBe(1);
    const json = JSON.parse(aegis(["envelope", "verify", "--full", "--json", "--envelope", f.store, f.record]).stdout) as {
      full: { mismatched: { digest: string }[] };
      exit_code: number;
    };
    expect(json.full.mismatched.map((m) => m.digest)).toEqual([digest]);
    expect(json.exit_code).toBe(1);
  });
});

describe("found in review", () => {
  it("redact never creates a store where there is none", () => {
    const dir = join(tempDir(), "not-a-store");
    const run = aegis(["envelope", "redact", "--envelope", dir, "--reason", "x", "0".repeat(64)]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^error: .*not-a-store is not an Envelope: /);
    expect(existsSync(dir)).toBe(false);
  });

  it("verify --envelope with an Envelope that cannot be read prints the verdict, and exits 2 (1 when Tampered): a check asked for did not run", async () => {
    const f = await writeFixture();
    const tampered = join(f.dir, "tampered.aarl");
    writeFileSync(tampered, readFileSync(f.record, "utf8").replace('"role":"ops"', '"role":"opz"'));
    const run = aegis(["verify", "--envelope", join(f.dir, "nonexistent"), tampered]);
    expect(run.stdout).toMatch(/^Tampered: /);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^error: the Envelope was not checked: .*nonexistent: No such file or directory/);
    const whole = aegis(["verify", "--envelope", join(f.dir, "nonexistent"), f.record]);
    expect(whole.stdout).toMatch(/^Verified /);
    expect(whole.status).toBe(2);
    const json = aegis(["verify", "--json", "--envelope", join(f.dir, "nonexistent"), f.record]);
    expect(json.status).toBe(2);
    expect((JSON.parse(json.stdout) as { envelope: { error: string } }).envelope.error).toContain("No such file or directory");
    const twice = aegis(["verify", "--envelope", f.store, "--envelope", f.store, f.record]);
    expect(twice.status).toBe(1);
    expect(twice.stderr).toContain("error: --envelope is given once");
  });

  it("envelope --help lists the subcommands; a missing DIGEST is named as such", () => {
    const help = aegis(["envelope", "--help"]);
    expect(help.status).toBe(0);
    for (const sub of ["verify", "get", "redact", "pack"]) expect(help.stdout).toContain(`  aegis envelope ${sub} `);
    const missing = aegis(["envelope", "get", "--envelope", fresh.store]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^error: envelope get requires <DIGEST>\n/);
  });

  it("envelope verify --json is one valid document, streamed", () => {
    const doc = JSON.parse(aegis(["envelope", "verify", "--json", "--envelope", fresh.store, fresh.record]).stdout) as {
      digests: unknown[];
      summary: { present: number };
      exit_code: number;
    };
    expect(doc.digests).toHaveLength(6);
    expect(doc).toMatchObject({ summary: { present: 6 }, exit_code: 0 });
  });
});
