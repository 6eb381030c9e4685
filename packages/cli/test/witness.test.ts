import { createPublicKey, verify as ed25519Verify } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { parseVerifierKey } from "@aegis/proof";
import { aegis, BIN, ROOT, STACK_TRACE, tempDir } from "./support.js";
import { startWitness, witnessKey, type RunningWitness } from "./witness-support.js";

/**
 * `aegis witness` (SPEC §19.6): a C2SP witness of our own, judged by requests another
 * implementation built (Go's x/mod `note` and `tlog`, conformance/go-witness) and by the C2SP
 * texts' own examples; and anchoring (`aegis checkpoint --witness`, `aegis verify --witness`)
 * against two witnesses run as real processes.
 */
const GO = join(ROOT, "packages/proof/test/fixtures/go-witness");
const GO_ORIGIN = "example.org/aegis/witness-test";

/** The C2SP check of a cosignature line, written here from tlog-cosignature's text alone. */
function cosignatureChecks(noteText: string, line: string, vkey: string): boolean {
  // vkey: <name>+<8 hex>+<base64 of 0x04 and the key>; the base64 may hold a +.
  const name = vkey.slice(0, vkey.indexOf("+"));
  const key = Buffer.from(vkey.slice(name.length + 10), "base64").subarray(1);
  const blob = Buffer.from(line.trim().split(" ")[2] ?? "", "base64");
  if (blob.length !== 4 + 8 + 64) return false;
  const timestamp = blob.readBigUInt64BE(4);
  const message = Buffer.from(`cosignature/v1\ntime ${timestamp}\n${noteText}`, "utf8");
  const spki = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), key]), format: "der", type: "spki" });
  return ed25519Verify(null, message, spki, blob.subarray(12));
}

async function post(url: string, body: Buffer | string): Promise<{ status: number; type: string; body: string }> {
  const response = await fetch(`${url}/add-checkpoint`, { method: "POST", body: typeof body === "string" ? body : Uint8Array.from(body) });
  return { status: response.status, type: response.headers.get("content-type") ?? "", body: await response.text() };
}

describe("aegis witness serve: requests Go's note and tlog built", () => {
  it("[M19.2] answers each as c2sp.org/tlog-witness says, and every 200 is a cosignature that checks", async () => {
    const dir = tempDir();
    const { key, vkey } = witnessKey(dir, "witness.example/go");
    const witness = await startWitness(key, [`${GO_ORIGIN}=${readFileSync(join(GO, "log.vkey"), "utf8").trim()}`], join(dir, "state"));
    try {
      expect(witness.vkey).toBe(vkey);
      const expected = readFileSync(join(GO, "expected.txt"), "utf8").trim().split("\n");
      for (const row of expected) {
        const [name = "", status = "", size] = row.split(" ");
        const body = readFileSync(join(GO, `${name}.req`));
        const answer = await post(witness.url, body);
        expect(answer.status, `${name}: ${answer.body}`).toBe(Number(status));
        if (status === "409") {
          expect(answer.type).toBe("text/x.tlog.size");
          expect(answer.body).toBe(`${size}\n`);
        }
        if (status === "200") {
          const noteText =
            body
              .subarray(body.indexOf("\n\n") + 2)
              .toString("utf8")
              .split("\n\n")[0] + "\n";
          expect(answer.body).toMatch(/^\u2014 witness\.example\/go \S+\n$/);
          expect(cosignatureChecks(noteText, answer.body, vkey), name).toBe(true);
        }
      }
      expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700);
    } finally {
      witness.child.kill("SIGTERM");
      await witness.exited;
    }
  }, 60_000);
});

describe("the C2SP texts' own examples", () => {
  // c2sp.org/tlog-witness, "add-checkpoint": the example request body.
  const EXAMPLE_REQUEST = [
    "old 20852014",
    "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=",
    "jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=",
    "5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=",
    "/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=",
    "",
    "example.com/behind-the-sofa",
    "20852163",
    "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=",
    "",
    "\u2014 example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=",
    "\u2014 example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=",
    "",
  ].join("\n");

  it("the example request reads: 404 where its origin is not witnessed, 403 where it is but under another key", async () => {
    const dir = tempDir();
    const { key } = witnessKey(dir, "witness.example/w1");
    const other = aegis(["keygen", "--out", join(dir, "log.key")]);
    const logKey = /^public_key ([0-9a-f]{64})$/m.exec(other.stdout)?.[1] ?? "";
    const unknown = await startWitness(key, [`example.org/other=${logKey}`], join(dir, "s1"));
    const known = await startWitness(key, [`example.com/behind-the-sofa=${logKey}`], join(dir, "s2"));
    try {
      expect((await post(unknown.url, EXAMPLE_REQUEST)).status).toBe(404);
      // Its two signatures are by keys this witness does not trust: ignored, so none verifies.
      const refused = await post(known.url, EXAMPLE_REQUEST);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain("no trusted key of example.com/behind-the-sofa signed this checkpoint");
    } finally {
      for (const w of [unknown, known]) w.child.kill("SIGTERM");
      await Promise.all([unknown.exited, known.exited]);
    }
  }, 60_000);

  it("the tlog-cosignature example: its key ID, time and signed message, as our client reads them", async () => {
    const { parseNote } = await import("../../proof/src/note.js");
    const { cosignedMessage } = await import("../../proof/src/checkpoint.js");
    const note = parseNote(
      Buffer.from(
        "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n" +
          "\u2014 example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" +
          "\u2014 witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n",
      ),
    );
    const cosignature = note.signatures[1];
    expect(cosignature?.name).toBe("witness.example.com/w1");
    expect(cosignature?.keyId).toBe(0x8d66cf3f);
    // The text's signed message example: time 1679315147, the big-endian timestamp of the line.
    expect(cosignature?.signature.readBigUInt64BE(0)).toBe(1679315147n);
    expect(cosignedMessage(note.text, 1679315147n).toString("utf8")).toBe(
      "cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
    );
  });
});

/** The demo's record, 15 Lines, its key, and its origin. */
function demoRecord(): { readonly dir: string; readonly record: string; readonly key: string; readonly publicKey: string; readonly origin: string } {
  const dir = tempDir();
  const out = join(dir, "demo");
  const made = aegis(["demo", "--out", out]);
  if (made.status !== 0) throw new Error(`demo: ${made.stderr}`);
  const record = join(out, "session.aarl");
  const key = join(out, "signing.key");
  const origin = (JSON.parse(aegis(["checkpoint", "--signing-key", key, "--json", record]).stdout) as { origin: string }).origin;
  const publicKey = readFileSync(join(out, "signing.pub"), "utf8").trim().split("\n").at(-1) ?? "";
  return { dir, record, key, publicKey, origin };
}

describe("anchoring: aegis checkpoint --witness and aegis verify --witness, with two witnesses", () => {
  let demo: ReturnType<typeof demoRecord>;
  let w1: RunningWitness;
  let w2: RunningWitness;
  beforeAll(async () => {
    demo = demoRecord();
    const k1 = witnessKey(demo.dir, "w1.example/witness");
    const k2 = witnessKey(demo.dir, "w2.example/witness");
    const log = `${demo.origin}=${demo.publicKey}`;
    [w1, w2] = await Promise.all([startWitness(k1.key, [log], join(demo.dir, "w1")), startWitness(k2.key, [log], join(demo.dir, "w2"))]);
  }, 60_000);
  afterAll(async () => {
    for (const w of [w1, w2]) w.child.kill("SIGTERM");
    await Promise.all([w1.exited, w2.exited]);
  });
  const both = (): string[] => ["--witness", `${w1.vkey}@${w1.url}`, "--witness", `${w2.vkey}@${w2.url}`];

  it("[M19.2] the first 5 Lines, then all: each cosigned by both (the second by the 5 to 15 proof); verify needs both", () => {
    const five = aegis(["checkpoint", "--signing-key", demo.key, "--size", "5", ...both(), "--min-witnesses", "2", demo.record]);
    expect(five.status, five.stderr).toBe(0);
    expect(five.stdout.match(/^\u2014 w[12]\.example\/witness /gm)).toHaveLength(2);
    const whole = aegis(["checkpoint", "--signing-key", demo.key, ...both(), "--min-witnesses", "2", "--json", demo.record]);
    expect(whole.status, whole.stderr).toBe(0);
    const doc = JSON.parse(whole.stdout) as { checkpoint: string; witnesses: { result: string }[] };
    expect(doc.witnesses.map((w) => w.result)).toEqual(["cosigned", "cosigned"]);
    const checkpoint = join(demo.dir, "whole.checkpoint");
    const fiveFile = join(demo.dir, "five.checkpoint");
    writeFileSync(checkpoint, doc.checkpoint);
    writeFileSync(fiveFile, five.stdout);

    const keys = ["--witness", w1.vkey, "--witness", w2.vkey];
    const verified = aegis(["verify", "--checkpoint", fiveFile, "--checkpoint", checkpoint, ...keys, "--min-witnesses", "2", "--json", demo.record]);
    expect(verified.status, verified.stdout).toBe(0);
    const report = JSON.parse(verified.stdout) as { verdict: string; checkpoints: { cosigned: string[] }[]; witnessed: { lines: number } };
    expect(report.checkpoints.map((c) => c.cosigned)).toEqual([
      ["w1.example/witness", "w2.example/witness"],
      ["w1.example/witness", "w2.example/witness"],
    ]);
    expect(report.witnessed.lines).toBe(15);
    // A second key that did not cosign: one of the two required.
    const stranger = witnessKey(demo.dir, "w3.example/witness");
    const short = aegis(["verify", "--checkpoint", checkpoint, "--witness", w1.vkey, "--witness", stranger.vkey, "--min-witnesses", "2", demo.record]);
    expect(short.status).toBe(3);
    expect(short.stdout).toContain("is cosigned by 1 of the 2 witnesses required");
  }, 120_000);

  it("[M19.2] a record cut below what a witness cosigned: the next push exits 1, naming the witness and its size", () => {
    const cut = join(demo.dir, "cut.aarl");
    writeFileSync(cut, readFileSync(demo.record, "utf8").split("\n").slice(0, 8).join("\n") + "\n");
    const pushed = aegis(["checkpoint", "--signing-key", demo.key, "--origin", demo.origin, ...both(), cut]);
    expect(pushed.status).toBe(1);
    expect(pushed.stderr).toContain(`witness ${w1.url}: it holds a tree of 15 lines for ${demo.origin}: the record was cut below what it cosigned`);
    expect(pushed.stderr).not.toMatch(STACK_TRACE);
  }, 60_000);

  it("a witness that accepts the connection and never answers is given up within 30 s, named; the other still cosigns", async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const address = silent.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
    try {
      const started = Date.now();
      const run = await aegisAsync([
        "checkpoint",
        "--signing-key",
        demo.key,
        "--witness",
        `${w1.vkey}@${w1.url}`,
        "--witness",
        `${w2.vkey}@${url}`,
        demo.record,
      ]);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(run.status).toBe(0);
      expect(run.stderr).toContain(`witness ${url}: no answer within 10 s; it did not cosign`);
      expect(run.stdout).toMatch(/^\u2014 w1\.example\/witness /m);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  }, 60_000);
});

/** The CLI, not blocking this process's event loop (a witness served here must answer meanwhile). */
async function aegisAsync(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, AEGIS_DEBUG: "" } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const status = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { status, stdout, stderr };
}

describe("aegis witness keygen", () => {
  it("writes the key 0600, prints a type 0x04 vkey whose key ID is its own, and refuses to overwrite without --force", () => {
    const dir = tempDir();
    const out = join(dir, "w.key");
    const made = aegis(["witness", "keygen", "--out", out, "--name", "witness.example/k"]);
    expect(made.status, made.stderr).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // The proof package's reader checks the key ID against the name and key.
    const vkey = parseVerifierKey(made.stdout.trim());
    expect([vkey.name, vkey.type]).toEqual(["witness.example/k", 0x04]);
    expect(readFileSync(out, "utf8")).toMatch(new RegExp(`^PRIVATE\\+KEY\\+witness\\.example/k\\+${vkey.keyId.toString(16).padStart(8, "0")}\\+B\\S+\\n$`));
    const again = aegis(["witness", "keygen", "--out", out]);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain("help: pass --force");
    expect(aegis(["witness", "keygen", "--out", out, "--force", "--name", "witness.example/k"]).status).toBe(0);
    expect(readdirSync(dir)).toEqual(["w.key"]);
  });
});
