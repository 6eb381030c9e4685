import { spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, GOLDEN, GOLDEN_PUBLIC_KEY, STACK_TRACE, aegis, aegisBounded, tempDir, vector, type BoundedRun } from "./support.js";

/**
 * Inputs made to hang or exhaust the CLI (issue 12's findings), each run as a child process
 * with a time bound (a hang fails, it does not stall the suite) and a memory bound of
 * 500 MB: never a crash, a stack trace, a hang or unbounded memory; always the documented
 * verdict or an error naming the limit (SPEC §18).
 */
const MEMORY_MIB = 500;
/** Calls left in flight by the unanswered-intents case; AEGIS_HOSTILE_IN_FLIGHT=1000000 for the long run. */
const IN_FLIGHT = Number(process.env["AEGIS_HOSTILE_IN_FLIGHT"] ?? 30_000);
const POLICY = vector("external/rust-aegis/recheck/unchanged.yaml");
const RECORD = vector("external/rust-aegis/recheck/session_clean.jsonl");

function refused(run: BoundedRun, exit: number, error: RegExp): void {
  expect(run.stderr).toMatch(error);
  expect(run.stderr).toMatch(/\nhelp: /);
  expect(run.stderr).not.toMatch(STACK_TRACE);
  expect(run.status).toBe(exit);
  expect(run.peakMiB).toBeLessThan(MEMORY_MIB);
}

function policyFile(text: string): string {
  const path = join(tempDir(), "policy.yaml");
  writeFileSync(path, text);
  return path;
}

const rules = (n: number): string =>
  `version: 1\ndefault: deny\nrules:\n${Array.from({ length: n }, (_, i) => `  - id: r${i}\n    action: allow\n    tool: t${i}\n`).join("")}`;

describe("paths that are no record file are refused before a byte is read", () => {
  it.each([
    ["verify /dev/zero", ["verify", "/dev/zero"]],
    ["show /dev/urandom", ["show", "/dev/urandom"]],
    ["recheck on /dev/zero", ["recheck", "--policy", POLICY, "/dev/zero"]],
    ["envelope verify on /dev/zero", ["envelope", "verify", "--envelope", tempDir(), "/dev/zero"]],
  ])("%s: exit 2, a character device is not a record file", (_name, args) => {
    refused(aegisBounded(args, { timeoutMs: 30_000 }), 2, /^error: read \/dev\/(zero|urandom): a character device, not a record file/);
  });

  it("a directory as the record: the reference's words, exit 2", () => {
    const dir = tempDir();
    refused(aegisBounded(["recheck", "--policy", POLICY, dir]), 2, /^error: read .*: Is a directory \(os error 21\)\n/);
  });

  it("a symlink loop: the file system's words, exit 2", () => {
    const dir = tempDir();
    symlinkSync(join(dir, "b"), join(dir, "a"));
    symlinkSync(join(dir, "a"), join(dir, "b"));
    refused(aegisBounded(["verify", join(dir, "a")]), 2, /^error: read .*a: Too many levels of symbolic links/);
  });
});

describe("deep nesting and FIFOs", () => {
  it("a record row nested 500,000 deep: the reference's recursion limit, a verdict, no crash", () => {
    const path = join(tempDir(), "deep.aarl");
    writeFileSync(path, `${"[".repeat(500_000)}${"]".repeat(500_000)}\n`);
    const run = aegisBounded(["verify", path]);
    expect(run.stdout).toBe("Indeterminate: final line 1 does not parse; torn write\n");
    expect(run.status).toBe(3);
    expect(run.peakMiB).toBeLessThan(MEMORY_MIB);
    const show = aegisBounded(["show", path]);
    expect(show.stdout).toContain("line 1 cannot be read: not JSON: recursion limit exceeded");
  });

  it("--current-tools nested 100,000 deep: read, no tool pinned from it, no crash", () => {
    const tools = join(tempDir(), "tools.json");
    writeFileSync(tools, `{"tools":[{"name":"deep","inputSchema":${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}]}`);
    const run = aegisBounded(["recheck", "--unverified-ok", "--policy", POLICY, "--current-tools", tools, RECORD]);
    expect(run.stderr).not.toMatch(STACK_TRACE);
    expect(run.stderr).toContain("tool_spec: 0 unchanged, 0 changed, 0 removed, 3 unpinned");
    expect(run.peakMiB).toBeLessThan(MEMORY_MIB);
  });

  it("a FIFO as --policy is refused at once, not waited on; as the record of verify it is read as a pipe", () => {
    const dir = tempDir();
    const fifo = join(dir, "fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    refused(
      aegisBounded(["recheck", "--policy", fifo, RECORD], { timeoutMs: 30_000 }),
      2,
      /^error: read policy .*fifo: not a regular file \(a FIFO \(named pipe\)\)\n/,
    );
    const run = spawnSync("/bin/sh", ["-c", `cat '${GOLDEN}' > '${fifo}' & node '${BIN}' verify '${fifo}'`], { encoding: "utf8", timeout: 30_000 });
    expect(run.stdout).toMatch(/^Verified \(unpinned\)\n/);
    expect(run.status).toBe(0);
  });
});

describe("- reads the record from standard input", () => {
  it("verify -: the same answer as the file", () => {
    const fromFile = aegis(["verify", "--key", GOLDEN_PUBLIC_KEY, GOLDEN]);
    const run = aegisBounded(["verify", "--key", GOLDEN_PUBLIC_KEY, "-"], { input: readFileSync(GOLDEN) });
    expect(run.stdout).toBe(fromFile.stdout);
    expect(run.status).toBe(0);
  });

  it("show -: the same account as the file (read twice, through a private copy)", () => {
    const fromFile = aegis(["show", GOLDEN]);
    const run = aegisBounded(["show", "-"], { input: readFileSync(GOLDEN) });
    expect(run.stdout).toBe(fromFile.stdout);
    expect(run.status).toBe(0);
  });
});

describe("files read whole are bounded by type and size (SPEC §18)", () => {
  it("--policy /dev/zero: refused as a character device, exit 2", () => {
    refused(aegisBounded(["recheck", "--policy", "/dev/zero", RECORD]), 2, /^error: read policy \/dev\/zero: not a regular file \(a character device\)\n/);
  });

  it("--trust-store /dev/zero: refused as a character device, exit 2", () => {
    refused(
      aegisBounded(["verify", "--trust-store", "/dev/zero", GOLDEN]),
      2,
      /^error: read trust store \/dev\/zero: not a regular file \(a character device\)\n/,
    );
  });

  it("a Policy Set of 300,000 rules (23 MB) is refused at the size limit, before it is parsed", () => {
    const run = aegisBounded(["recheck", "--policy", policyFile(rules(300_000)), RECORD]);
    refused(run, 2, /^error: policy parse error: \(file\): \d+ bytes, over the limit of 1048576 bytes \(SPEC §18\)\n/);
    expect(run.peakMiB).toBeLessThan(200);
  });

  it("10,001 rules within the size limit: the list limit, named once", () => {
    refused(
      aegisBounded(["recheck", "--policy", policyFile(rules(10_001)), RECORD]),
      2,
      /^error: policy parse error: rules: 10001 entries, over the limit of 10000 \(SPEC §18\)\n/,
    );
  });

  it.each([
    ["flow", `rules: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`],
    ["block", `${Array.from({ length: 40 }, (_, i) => `${" ".repeat(i)}k:`).join("\n")} 1\n`],
  ])("a Policy Set nested 100,000 deep (%s) names the depth limit, not the call stack", (_kind, text) => {
    refused(
      aegisBounded(["recheck", "--policy", policyFile(text), RECORD]),
      2,
      /^error: policy parse error: line \d+, column \d+: nested more than 32 levels deep, the limit/,
    );
  });

  it("200,000 YAML documents: refused at the second, at once", () => {
    refused(aegisBounded(["recheck", "--policy", policyFile("---\n".repeat(200_000)), RECORD]), 2, /a Policy Set is one YAML document/);
  });

  it("bindings nested too deep, for wrap: the same limit", async () => {
    const { BindingsParseError, parseBindings } = await import("@aegis/policy");
    let thrown: unknown;
    try {
      parseBindings(`version: 1\ntools: ${"[".repeat(50)}${"]".repeat(50)}\n`);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BindingsParseError);
    if (thrown instanceof BindingsParseError) expect(thrown.problems).toEqual([expect.objectContaining({ code: "too_deep", limit: 32 })]);
  });
});

describe("a vectors directory is read as a manifest says, and no further", () => {
  it("a manifest that is a device: refused as not a regular file, exit 2", () => {
    const dir = tempDir();
    symlinkSync("/dev/zero", join(dir, "manifest.json"));
    refused(aegisBounded(["vectors", dir]), 2, /^error: cannot run the vectors in .*manifest\.json: not a regular file \(a character device\)\n/);
  });

  it("an input path outside the directory: that vector fails, nothing read there", () => {
    const dir = tempDir();
    const vector = { id: "escape", kind: "policy", input: { policy: "../../../../etc/passwd", decisions: [] }, expected: { result: "valid" } };
    writeFileSync(join(dir, "manifest.json"), JSON.stringify({ schema: "aegis.vectors/1", vectors: [vector] }));
    // That vector fails, naming why; the others would still run.
    const run = aegisBounded(["vectors", dir]);
    expect(run.stdout).toMatch(/^FAIL escape\n[\s\S]*vector escape names \.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd, outside the vectors directory/);
    expect(run.stdout).not.toContain("root:");
    expect(run.status).toBe(1);
  });
});

describe("records made to be slow", () => {
  it("200 MB of empty rows: read in bounded time and memory, Indeterminate like an empty file", () => {
    const path = join(tempDir(), "empty-rows.aarl");
    writeFileSync(path, Buffer.alloc(200 * 1024 * 1024, 0x0a));
    const run = aegisBounded(["verify", path], { timeoutMs: 120_000 });
    expect(run.stdout).toMatch(/^Indeterminate: /);
    expect(run.status).toBe(3);
    expect(run.peakMiB).toBeLessThan(MEMORY_MIB);
  });

  it("one 200 MB row: line_too_long, its bytes never held", () => {
    const path = join(tempDir(), "one-row.aarl");
    const fd = openSync(path, "w");
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 200; i++) writeSync(fd, chunk);
    closeSync(fd);
    const run = aegisBounded(["verify", path], { timeoutMs: 120_000 });
    expect(run.stdout).toMatch(/^Indeterminate: line 1 is longer than 1048576 bytes; not read\n/);
    expect(run.status).toBe(3);
    expect(run.peakMiB).toBeLessThan(MEMORY_MIB);
  });
});

describe("a record of unanswered intents (memory grew with calls in flight)", () => {
  it(
    `${IN_FLIGHT} calls in flight with long ids: verify, verify --json, show and show --json stay bounded and say the same`,
    { timeout: 240_000 },
    async () => {
      const { PrevHash, RequestDigest, SigningKey } = await import("@aegis/format");
      const { sealLine } = await import("@aegis/format/internal");
      const path = join(tempDir(), "in-flight.aarl");
      const key = SigningKey.fromSeed(new Uint8Array(32).fill(5));
      let tail = sealLine({ schema_version: 2, line_type: "open", seq: 0, prev_hash: PrevHash.GENESIS, public_key: key.publicKeyHex }, key);
      const rows = [tail.text];
      const pad = "x".repeat(300);
      for (let seq = 1; seq <= IN_FLIGHT; seq++) {
        tail = sealLine({
          schema_version: 2,
          line_type: "intent",
          seq,
          prev_hash: PrevHash.after(tail.lineHash),
          call_id: `call-${seq}-${pad}`,
          tool_id: "fs.read",
          request_digest: RequestDigest.of(Buffer.from(String(seq))),
        });
        rows.push(tail.text);
      }
      writeFileSync(path, `${rows.join("\n")}\n`);
      rows.length = 0;

      const text = aegisBounded(["verify", path], { timeoutMs: 120_000 });
      expect(text.stdout.split("\n").filter((l) => l.startsWith("in_flight ")).length).toBe(IN_FLIGHT);
      const json = aegisBounded(["verify", "--json", path], { timeoutMs: 120_000 });
      const doc = JSON.parse(json.stdout) as { in_flight: string[]; reason: { in_flight: string[] } };
      expect(json.stdout).toBe(`${JSON.stringify(doc, null, 2)}\n`);
      expect(doc.in_flight).toHaveLength(IN_FLIGHT);
      expect(doc.reason.in_flight).toEqual(doc.in_flight);
      const show = aegisBounded(["show", path], { timeoutMs: 120_000 });
      expect(show.stdout.split("none: the call was in flight when this Session ended").length - 1).toBe(IN_FLIGHT);
      const showJson = aegisBounded(["show", "--json", path], { timeoutMs: 120_000 });
      expect((JSON.parse(showJson.stdout) as { entries: unknown[] }).entries).toHaveLength(IN_FLIGHT + 1);
      expect([text.status, json.status, show.status, showJson.status]).toEqual([3, 3, 0, 0]);
      for (const run of [text, json, show, showJson]) expect(run.peakMiB).toBeLessThan(MEMORY_MIB);
    },
  );
});

describe("errors that name the right thing", () => {
  it("--policies /nonexistent speaks of --policies", () => {
    const run = aegisBounded(["recheck", "--as-recorded", "--policies", "/nonexistent", RECORD]);
    refused(run, 2, /^error: read policies \/nonexistent: No such file or directory/);
    expect(run.stderr).toContain("help: check the path; --policies takes a directory of Policy Set files");
  });

  it("envelope pack --out in a missing directory names --out, not a temporary file or the free space", () => {
    const run = aegisBounded([
      "envelope",
      "pack",
      "--envelope",
      vector("envelope/store_all_present/store"),
      "--out",
      "/nonexistent/x.pack",
      vector("envelope/store_all_present/session.aarl"),
    ]);
    refused(run, 2, /^error: cannot use \/nonexistent\/x\.pack: No such file or directory/);
    expect(run.stderr).not.toContain(".tmp-");
    expect(run.stderr).not.toContain("free space");
  });

  it("envelope redact on a pack: a pack is read-only", () => {
    const run = aegisBounded(["envelope", "redact", "--envelope", vector("envelope/pack_all_present/envelope.pack"), "--reason", "x", "0".repeat(64)]);
    refused(run, 2, /a pack is read-only/);
  });

  it("keygen --out <DIR> --force: a directory is not a key file", () => {
    const dir = tempDir();
    const run = aegisBounded(["keygen", "--out", dir, "--force"]);
    expect(run.stderr).toMatch(/^error: signing key .*: a directory, not a key file/);
    expect(run.stderr).not.toContain("without --force");
    expect(run.status).toBe(2);
  });

  it("a missing required option is named", () => {
    const run = aegisBounded(["envelope", "verify", RECORD]);
    expect(run.stderr).toMatch(/^error: envelope verify requires --envelope \(/);
    expect(run.status).toBe(1);
  });

  it("verify --key <a file>: --trust-store is the option that reads one", () => {
    const dir = tempDir();
    const pub = join(dir, "signing.pub");
    writeFileSync(pub, `${GOLDEN_PUBLIC_KEY}\n`);
    const run = aegisBounded(["verify", "--key", pub, GOLDEN]);
    refused(
      run,
      1,
      /^error: --key needs a 64-hex public key: .*signing\.pub is a file; --key takes the key itself, and --trust-store <PATH> reads keys from a file\n/,
    );
    expect(aegisBounded(["verify", "--trust-store", pub, GOLDEN]).status).toBe(0);
  });
});
