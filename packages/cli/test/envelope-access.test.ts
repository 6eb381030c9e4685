import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { EnvelopeStore } from "@aegis/envelope";
import { SigningKey } from "@aegis/format";
import { writePublicKeyFile, writeKeyFile } from "@aegis/format/internal";
import { BIN, STACK_TRACE, aegis, tempDir } from "./support.js";

/**
 * `aegis envelope get --audit` (SPEC §14.11): the read is a call in an access record, durable
 * before a byte is printed; without the signing key nothing is read.
 */
const SECRET = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"deploy","arguments":{"token":"s3cr3t-value"}}}';
const sha256 = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex");
const READER = SigningKey.fromSeed(new Uint8Array(32).fill(21));

interface Setup {
  readonly dir: string;
  readonly store: string;
  readonly digest: string;
  readonly key: string;
  readonly publicKey: string;
}

let setup: Setup;

beforeAll(async () => {
  const dir = tempDir();
  const store = join(dir, "session.envelope");
  const envelope = await EnvelopeStore.open(store);
  const digest = await envelope.putRequest(new TextEncoder().encode(SECRET));
  await envelope.putRequest(new TextEncoder().encode("another entry"));
  await envelope.close();
  const key = join(dir, "reader.key");
  await writeKeyFile(key, READER);
  const publicKey = join(dir, "reader.pub");
  await writePublicKeyFile(publicKey, READER.publicKeyHex);
  setup = { dir, store, digest, key, publicKey };
});

type Line = Record<string, unknown>;
const linesOf = (path: string): Line[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Line);

/** The canonical form (SPEC §3) of an object of strings: members sorted, as JSON writes them. */
const canonical = (o: Record<string, string>): string =>
  `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`)
    .join(",")}}`;

function get(audit: string, extra: readonly string[] = [], digest = setup.digest): ReturnType<typeof aegis> {
  return aegis(["envelope", "get", "--envelope", setup.store, "--audit", audit, "--signing-key", setup.key, ...extra, digest]);
}

describe("aegis envelope get --audit (SPEC §14.11)", () => {
  it("[M14.13] records who read which digest and why in a Verified access record, then prints the bytes", () => {
    const audit = join(tempDir(), "access.aarl");
    const reason = "INC-2231: what did the deploy call send?";
    const run = get(audit, ["--reason", reason]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(SECRET);

    // Owner-only, as every record aegis writes (SPEC §13.2): it names what was read, and why.
    expect(statSync(audit).mode & 0o777).toBe(0o600);
    // The access record is a record like any other, signed by the reader's key.
    const verify = aegis(["verify", "--trust-store", setup.publicKey, audit]);
    expect(verify.status, verify.stdout).toBe(0);
    expect(verify.stdout).toMatch(/^Verified \(pinned to /);

    const lines = linesOf(audit);
    expect(lines.map((l) => l["line_type"])).toEqual(["open", "intent", "outcome", "close"]);
    const access = { digest: setup.digest, reason, os_user: userInfo().username, reader_key_id: READER.keyId };
    const [, intent, outcome] = lines;
    for (const line of [intent, outcome]) {
      expect(line?.["tool_id"]).toBe("aegis.envelope.get");
      expect(line?.["envelope_access"]).toEqual(access);
      // The request is the access itself: its digest is the SHA-256 of its canonical form.
      expect(line?.["request_digest"]).toBe(sha256(canonical(access)));
    }
    expect(outcome?.["key_id"]).toBe(READER.keyId);
    expect(outcome?.["execution"]).toEqual({ status: "success" });
    // The bytes served hash to the digest read: the outcome names them as its response.
    expect(outcome?.["response_digest"]).toBe(setup.digest);
    expect(outcome?.["decision_axes"]).toMatchObject({ capability: "envelope.read", fs: { path_canonical: setup.store } });

    // A second read appends a Session: the log is one chain.
    expect(get(audit, ["--reason", "second look"]).status).toBe(0);
    expect(aegis(["verify", "--trust-store", setup.publicKey, audit]).stdout).toMatch(/^Verified \(pinned to .*\ncoverage session 1 seq 3\n/s);

    // aegis show says who read what and why; show --path finds reads of the store.
    const shown = aegis(["show", "--call", "call-1", audit]);
    expect(shown.stdout).toContain(
      `    reads       ${setup.digest}\n    reader      ${userInfo().username}, key_id ${READER.keyId}\n    reason      ${reason}\n`,
    );
    expect(aegis(["show", "--path", setup.store, audit]).stdout).toMatch(/\n2 of 2 calls named path /);
  });

  it("without the signing key reads nothing and writes nothing", () => {
    const dir = tempDir();
    const audit = join(dir, "access.aarl");
    const bare = aegis(["envelope", "get", "--envelope", setup.store, "--audit", audit, "--reason", "no key", setup.digest]);
    expect(bare.status).toBe(1);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).toMatch(/^error: --audit, --signing-key and --reason go together/);
    const noReason = aegis(["envelope", "get", "--envelope", setup.store, "--audit", audit, "--signing-key", setup.key, setup.digest]);
    expect(noReason.status).toBe(1);
    expect(noReason.stdout).toBe("");
    const unreadable = aegis([
      "envelope",
      "get",
      "--envelope",
      setup.store,
      "--audit",
      audit,
      "--signing-key",
      join(dir, "absent.key"),
      "--reason",
      "x",
      setup.digest,
    ]);
    expect(unreadable.status).toBe(2);
    expect(unreadable.stdout).toBe("");
    expect(unreadable.stderr).not.toMatch(STACK_TRACE);
    // A public key signs nothing (SPEC §13.6).
    const publicOnly = aegis(["envelope", "get", "--envelope", setup.store, "--audit", audit, "--signing-key", setup.publicKey, "--reason", "x", setup.digest]);
    expect(publicOnly.status).not.toBe(0);
    expect(publicOnly.stdout).toBe("");
    expect(existsSync(audit)).toBe(false);
  });

  it("[M14.13] prints nothing when its outcome cannot be made durable (a file size limit between the intent and the outcome)", () => {
    // How far one Session's open and intent reach, in a record of its own.
    const measured = join(tempDir(), "measured.aarl");
    expect(get(measured, ["--reason", "size"]).status).toBe(0);
    const text = readFileSync(measured, "utf8");
    const intentEnd = text.indexOf("\n", text.indexOf("\n") + 1) + 1;
    const audit = join(tempDir(), "access.aarl");
    const run = spawnSync(
      "prlimit",
      [
        `--fsize=${intentEnd + 64}`,
        process.execPath,
        BIN,
        "envelope",
        "get",
        "--envelope",
        setup.store,
        "--audit",
        audit,
        "--signing-key",
        setup.key,
        "--reason",
        "size",
        setup.digest,
      ],
      { encoding: "utf8", env: { ...process.env, AEGIS_DEBUG: "" } },
    );
    expect(run.status, run.stderr).not.toBe(0);
    expect(run.stdout).toBe("");
    // The attempt is on the record: the intent was durable before the Envelope was opened;
    // the outcome stopped at the limit, a torn last row.
    const rows = readFileSync(audit, "utf8").split("\n");
    expect(rows.slice(0, 2).map((r) => (JSON.parse(r) as Line)["line_type"])).toEqual(["open", "intent"]);
    expect(rows.slice(2)).toEqual([expect.stringMatching(/^\{"call_id":"call-1",/) as unknown]);
    // Until it is repaired, no read is recorded, so none is made.
    const after = get(audit, ["--reason", "after"]);
    expect(after.status).toBe(2);
    expect(after.stdout).toBe("");
    expect(after.stderr).toMatch(/torn/);
  });

  it("refuses bytes that do not hash to their digest, as without --audit, and records that it did", async () => {
    const dir = tempDir();
    const store = join(dir, "altered.envelope");
    const envelope = await EnvelopeStore.open(store);
    const digest = await envelope.putRequest(new TextEncoder().encode(SECRET));
    await envelope.close();
    const segment = join(store, readdirSync(store).find((n) => n.endsWith(".seg")) ?? "");
    const data = readFileSync(segment);
    const at = data.indexOf("s3cr3t-value");
    data[at] = (data[at] ?? 0) ^ 0x20;
    writeFileSync(segment, data);

    const audit = join(dir, "access.aarl");
    const run = aegis(["envelope", "get", "--envelope", store, "--audit", audit, "--signing-key", setup.key, "--reason", "check", digest]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^error: digest_mismatch: /);
    const outcome = linesOf(audit).find((l) => l["line_type"] === "outcome");
    expect(outcome?.["execution"]).toMatchObject({
      status: "trap",
      message: expect.stringMatching(/^digest_mismatch: the stored bytes hash to [0-9a-f]{64}$/) as unknown,
    });
    expect(outcome?.["response_digest"]).toBeUndefined();
    expect(aegis(["verify", "--trust-store", setup.publicKey, audit]).status).toBe(0);
  });
});
