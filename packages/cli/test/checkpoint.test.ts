import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SigningKey } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { SIGNATURE_TYPE, cosignCheckpoint, formatVerifierKey, noteVerifier, signCheckpoint } from "@aegis/proof";
import { describe, expect, it } from "vitest";
import { GOLDEN, ROOT, STACK_TRACE, aegis, tempDir } from "./support.js";

const GO = (file: string): string => readFileSync(join(ROOT, "vectors/external/c2sp-go", file), "utf8");

/** The development key as a key file: the key Go's checkpoints over the golden Session were made with. */
function devKeyFile(dir: string): string {
  const path = join(dir, "dev.key");
  writeFileSync(path, insecureDevKey().exportSeedHex(), { mode: 0o600 });
  return path;
}

describe("aegis checkpoint", () => {
  it("prints Go's checkpoints of the golden Session byte for byte, whole and of its first 5 Lines", () => {
    const key = devKeyFile(tempDir());
    for (const [size, args] of [
      [12, []],
      [5, ["--size", "5"]],
    ] as const) {
      const run = aegis(["checkpoint", "--signing-key", key, "--origin", "example.org/aegis/test", ...args, GOLDEN]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toBe(GO(`size-${size}/checkpoint`));
      expect(run.stderr).toContain("warning: signed with the published development key");
    }
  });

  it("says the same in --json, under the record's own origin by default", () => {
    const key = devKeyFile(tempDir());
    const text = aegis(["checkpoint", "--signing-key", key, GOLDEN]);
    const json = aegis(["checkpoint", "--json", "--signing-key", key, GOLDEN]);
    const doc = JSON.parse(json.stdout) as { schema: string; origin: string; size: number; root: string; checkpoint: string };
    expect(doc.schema).toBe("aegis.checkpoint/1");
    expect(doc.origin).toMatch(/^aegis\.invalid\/record\/[0-9a-f]{64}$/);
    expect(doc.size).toBe(12);
    expect(doc.checkpoint).toBe(text.stdout);
    expect(text.stdout.startsWith(`${doc.origin}\n12\n${doc.root}\n\n`)).toBe(true);
  });

  it("refuses more Lines than the record holds, another Session's key and a tampered record: exit 1, no stack trace", () => {
    const dir = tempDir();
    const key = devKeyFile(dir);
    const tooMany = aegis(["checkpoint", "--signing-key", key, "--size", "13", GOLDEN]);
    expect(tooMany.status).toBe(1);
    expect(tooMany.stderr).toMatch(/^error: cannot checkpoint .*: it has fewer than 13 Lines that verify\nhelp: choose a --size/m);

    aegis(["keygen", "--out", join(dir, "other.key")]);
    const other = aegis(["checkpoint", "--signing-key", join(dir, "other.key"), GOLDEN]);
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/Line 12 is in a Session signed by 3de537a0.*, not by this key/);

    const tampered = join(dir, "tampered.aarl");
    writeFileSync(tampered, readFileSync(GOLDEN, "utf8").replace('"tool_id":"chatty"', '"tool_id":"chattY"'));
    const broken = aegis(["checkpoint", "--signing-key", key, tampered]);
    expect(broken.status).toBe(1);
    expect(broken.stderr).toMatch(/it does not verify: Tampered/);
    for (const run of [tooMany, other, broken]) {
      expect(run.stdout).toBe("");
      expect(run.stderr).not.toMatch(STACK_TRACE);
    }
  });

  it("refuses a bad --size or --origin as usage (exit 1), and a missing key file as unreadable (exit 2)", () => {
    const key = devKeyFile(tempDir());
    for (const args of [
      ["--size", "05"],
      ["--size", "-1"],
      ["--origin", "has space"],
      ["--origin", "a+b"],
    ]) {
      const run = aegis(["checkpoint", "--signing-key", key, ...args, GOLDEN]);
      expect(run.status, args.join(" ")).toBe(1);
      expect(run.stderr).toMatch(/^error: .*\nhelp: .*(aegis checkpoint --help|usage)/);
    }
    const missing = aegis(["checkpoint", "--signing-key", join(tempDir(), "nope.key"), GOLDEN]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^error: .*\nhelp: generate a key/);
  });
});

describe("aegis prove and aegis proof verify", () => {
  const GOLDEN_KEY = "3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c";

  function checkpointed(): { dir: string; checkpoint: string } {
    const dir = tempDir();
    const checkpoint = join(dir, "golden.checkpoint");
    writeFileSync(checkpoint, aegis(["checkpoint", "--signing-key", devKeyFile(dir), "--origin", "example.org/aegis/test", GOLDEN]).stdout);
    return { dir, checkpoint };
  }

  it("prints Go's proof of a Line byte for byte, and checks every Go-made proof with the public key alone", () => {
    const { checkpoint } = checkpointed();
    for (const line of [1, 4, 12]) {
      const run = aegis(["prove", "--checkpoint", checkpoint, "--line", String(line), GOLDEN]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toBe(GO(`size-12/${line - 1}.tlog-proof`));
    }
    const all = [...Array(12).keys()].map((i) => join(ROOT, `vectors/external/c2sp-go/size-12/${i}.tlog-proof`));
    const verify = aegis(["proof", "verify", "--key", GOLDEN_KEY, ...all]);
    expect(verify.status, verify.stderr).toBe(0);
    expect(verify.stdout.trimEnd().split("\n")).toHaveLength(12);
    expect(verify.stdout).toContain("0.tlog-proof: OK: Line 1 of 12 in example.org/aegis/test: open of a Session");
    expect(verify.stdout).toContain(
      "3.tlog-proof: OK: Line 4 of 12 in example.org/aegis/test: outcome of call call-golden-2, tool chatty: policy rate_limited",
    );
  });

  it("writes one proof per Line of a parked call, the approval's decision included", () => {
    const { dir, checkpoint } = checkpointed();
    const out = join(dir, "proofs");
    const run = aegis(["prove", "--checkpoint", checkpoint, "--call", "call-golden-3", "--out", out, GOLDEN]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${join(out, "5.tlog-proof")}\n${join(out, "11.tlog-proof")}\n`);
    const verify = aegis(["proof", "verify", "--json", "--key", GOLDEN_KEY, join(out, "5.tlog-proof"), join(out, "11.tlog-proof")]);
    const doc = JSON.parse(verify.stdout) as { ok: boolean; proofs: { says: string }[] };
    expect(verify.status).toBe(0);
    expect(doc.ok).toBe(true);
    expect(doc.proofs.map((p) => p.says)).toEqual([
      "outcome of call call-golden-3, tool dream: policy pending_approval, execution host_denied (signed)",
      "decision on apr-gate-dream-1: approved (signed)",
    ]);
  });

  it("fails a proof under another key, with a byte altered, or short of witnesses: exit 1, each named", () => {
    const dir = tempDir();
    const good = join(ROOT, "vectors/external/c2sp-go/size-12/5.tlog-proof");
    const altered = join(dir, "altered.tlog-proof");
    const bytes = readFileSync(good);
    bytes[40] = (bytes[40] ?? 0) ^ 1;
    writeFileSync(altered, bytes);
    const other = aegis(["proof", "verify", "--key", "00".repeat(32).replace(/^00/, "3d"), good]);
    expect(other.status).toBe(1);
    expect(other.stdout).toContain("FAILED: the checkpoint of example.org/aegis/test is not signed by a key given");
    const run = aegis(["proof", "verify", "--key", GOLDEN_KEY, good, altered]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/5\.tlog-proof: OK: /);
    expect(run.stdout).toMatch(/altered\.tlog-proof: FAILED: /);
  });

  it("counts witness cosignatures: --min-witnesses passes a proof whose checkpoint a given witness cosigned, and fails one it did not", () => {
    const { dir, checkpoint } = checkpointed();
    const witness = SigningKey.generate();
    const vkey = formatVerifierKey(noteVerifier("witness.example/w1", SIGNATURE_TYPE.cosignatureV1, witness.publicKey));
    const cosigned = join(dir, "cosigned.checkpoint");
    writeFileSync(cosigned, cosignCheckpoint(readFileSync(checkpoint, "utf8"), witness, "witness.example/w1", 1_780_000_000n));
    const withWitness = join(dir, "with.tlog-proof");
    const without = join(dir, "without.tlog-proof");
    writeFileSync(withWitness, aegis(["prove", "--checkpoint", cosigned, "--line", "4", GOLDEN]).stdout);
    writeFileSync(without, aegis(["prove", "--checkpoint", checkpoint, "--line", "4", GOLDEN]).stdout);
    const run = aegis(["proof", "verify", "--json", "--key", GOLDEN_KEY, "--witness", vkey, "--min-witnesses", "1", withWitness, without]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(1);
    const doc = JSON.parse(run.stdout) as { proofs: { ok: boolean; check: string; witnesses?: string[] }[] };
    expect(doc.proofs.map((p) => [p.ok, p.check, p.witnesses])).toEqual([
      [true, "included", ["witness.example/w1"]],
      [false, "too_few_witnesses", []],
    ]);
    const bad = aegis(["proof", "verify", "--key", GOLDEN_KEY, "--witness", vkey.replace(/\+[0-9a-f]{8}\+/, "+00000000+"), withWitness]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^error: --witness .*is not the key's/);
  });

  it("[M19.1] --min-witnesses 2 counts witness keys, not lines: one witness's line written twice fails, two witnesses pass", () => {
    const { dir, checkpoint } = checkpointed();
    const [w1, w2] = [SigningKey.generate(), SigningKey.generate()];
    const vkey = (key: SigningKey, name: string): string => formatVerifierKey(noteVerifier(name, SIGNATURE_TYPE.cosignatureV1, key.publicKey));
    const once = cosignCheckpoint(readFileSync(checkpoint, "utf8"), w1, "witness.example/w1", 1_780_000_000n);
    const lines = once.split("\n");
    const proofUnder = (name: string, note: string): string => {
      const path = join(dir, `${name}.checkpoint`);
      writeFileSync(path, note);
      const proof = join(dir, `${name}.tlog-proof`);
      writeFileSync(proof, aegis(["prove", "--checkpoint", path, "--line", "4", GOLDEN]).stdout);
      return proof;
    };
    const repeated = proofUnder("repeated", `${once}${lines.at(-2) ?? ""}\n`);
    const both = proofUnder("both", cosignCheckpoint(once, w2, "witness.example/w2", 1_780_000_001n));
    const given = ["--witness", vkey(w1, "witness.example/w1"), "--witness", vkey(w2, "witness.example/w2"), "--min-witnesses", "2"];
    const run = aegis(["proof", "verify", "--json", "--key", GOLDEN_KEY, ...given, repeated, both]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(1);
    const doc = JSON.parse(run.stdout) as { proofs: { ok: boolean; check: string; witnesses?: string[]; detail: string }[] };
    expect(doc.proofs.map((p) => [p.ok, p.check, p.witnesses])).toEqual([
      [false, "too_few_witnesses", ["witness.example/w1"]],
      [true, "included", ["witness.example/w1", "witness.example/w2"]],
    ]);
    const text = aegis(["proof", "verify", "--key", GOLDEN_KEY, ...given, repeated]);
    expect(text.status).toBe(1);
    expect(text.stdout).toBe(`${repeated}: FAILED: cosigned by 1 distinct witness key; 2 required\n`);
    // One key given twice, under two names, is one witness: two of it are never there, which
    // is the check's answer (SPEC §19.3, as the vector proof_witness_key_under_two_names says).
    const twice = ["--witness", vkey(w1, "witness.example/w1"), "--witness", vkey(w1, "witness.example/again")];
    const alias = aegis(["proof", "verify", "--key", GOLDEN_KEY, ...twice, "--min-witnesses", "2", both]);
    expect(alias.status).toBe(1);
    expect(alias.stdout).toBe(`${both}: FAILED: cosigned by 1 distinct witness key; 2 required\n`);
    // More than the --witness options given is refused before anything is read.
    const more = aegis(["proof", "verify", "--key", GOLDEN_KEY, ...twice, "--min-witnesses", "3", both]);
    expect(more.status).toBe(1);
    expect(more.stdout).toBe("");
    expect(more.stderr).toContain("error: --min-witnesses 3: a number from 0 to the 2 --witness keys given");
    expect(more.stderr).not.toMatch(STACK_TRACE);
    expect(alias.stderr).not.toMatch(STACK_TRACE);
  });

  it("refuses a record that no longer matches the checkpoint, and a Line beyond it", () => {
    const { dir, checkpoint } = checkpointed();
    const five = join(dir, "five.checkpoint");
    writeFileSync(five, GO("size-5/checkpoint"));
    const beyond = aegis(["prove", "--checkpoint", five, "--line", "6", GOLDEN]);
    expect(beyond.status).toBe(1);
    expect(beyond.stderr).toMatch(/^error: cannot prove: Line 6 is not among the 5 the checkpoint covers/);
    const changed = join(dir, "changed.aarl");
    writeFileSync(changed, readFileSync(GOLDEN, "utf8").split("\n").slice(0, 6).join("\n").replace("call-golden-0", "call-golden-X") + "\n");
    const run = aegis(["prove", "--checkpoint", checkpoint, "--line", "1", changed]);
    expect(run.status).toBe(1);
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });
});

describe("aegis verify --checkpoint (SPEC §19.4)", () => {
  const GOLDEN_KEY = "3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c";
  const GO_PATH = (file: string): string => join(ROOT, "vectors/external/c2sp-go", file);

  it("passes a record its checkpoints match, one line each; without --checkpoint the output is unchanged", () => {
    const plain = aegis(["verify", "--key", GOLDEN_KEY, GOLDEN]);
    const run = aegis(["verify", "--key", GOLDEN_KEY, "--checkpoint", GO_PATH("size-12/checkpoint"), "--checkpoint", GO_PATH("size-5/checkpoint"), GOLDEN]);
    expect(run.status).toBe(0);
    expect(run.stdout.startsWith(plain.stdout)).toBe(true);
    expect(run.stdout.slice(plain.stdout.length)).toMatch(
      /^checkpoint .*size-12\/checkpoint \(example\.org\/aegis\/test, 12 lines\): matches the record's first lines\ncheckpoint .*size-5\/checkpoint .*: matches/,
    );
  });

  it("finds a record cut short under a checkpoint Tampered (truncated), though alone it is not", () => {
    const dir = tempDir();
    const cut = join(dir, "cut.aarl");
    writeFileSync(cut, `${readFileSync(GOLDEN, "utf8").split("\n").slice(0, 8).join("\n")}\n`);
    expect(aegis(["verify", "--key", GOLDEN_KEY, cut]).status).toBe(3);
    const run = aegis(["verify", "--json", "--key", GOLDEN_KEY, "--checkpoint", GO_PATH("size-12/checkpoint"), cut]);
    expect(run.status).toBe(1);
    const doc = JSON.parse(run.stdout) as { verdict: string; reason: { code: string; size: number; lines: number }; checkpoints: { code: string }[] };
    expect(doc.verdict).toBe("tampered");
    expect(doc.reason).toMatchObject({ code: "truncated", size: 12, lines: 8 });
    expect(doc.checkpoints.map((c) => c.code)).toEqual(["truncated"]);
  });

  it("finds another record's Lines under a checkpoint Tampered (checkpoint_mismatch), and two roots for one size a fork", () => {
    const dir = tempDir();
    const key = devKeyFile(dir);
    // A checkpoint, signed by the Session's own key, of 5 Lines with a root they do not have
    // (that of all 12): what a record rewritten after its checkpoint was made looks like.
    const twelve = readFileSync(GO_PATH("size-12/checkpoint"), "utf8").split("\n")[2] ?? "";
    const forged = join(dir, "forged.checkpoint");
    writeFileSync(forged, signedCheckpoint(key, twelve, 5));
    const run = aegis(["verify", "--key", GOLDEN_KEY, "--checkpoint", forged, GOLDEN]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^Tampered: the first 5 lines hash to root bzG\/dmRF8Un777y\/71u5Dbvb6\/gQNpj62hll5BUg2dc=, not the root cec\+RDbGX/);
    const fork = aegis(["verify", "--key", GOLDEN_KEY, "--checkpoint", GO_PATH("size-5/checkpoint"), "--checkpoint", forged, GOLDEN]);
    expect(fork.status).toBe(1);
    expect(fork.stdout).toMatch(
      /^Tampered: checkpoints .*size-5\/checkpoint and .*forged\.checkpoint of example\.org\/aegis\/test state different roots for 5 lines; the record forked/,
    );
  });

  it("anchors a crashed writer's tail with a checkpoint of every Line: Verified, its calls in flight still listed", () => {
    const dir = tempDir();
    const key = devKeyFile(dir);
    const crashed = join(dir, "crashed.aarl");
    // The golden Session's first 2 Lines: its open, and an intent whose call never got its outcome.
    writeFileSync(crashed, `${readFileSync(GOLDEN, "utf8").split("\n").slice(0, 2).join("\n")}\n`);
    const alone = aegis(["verify", "--key", GOLDEN_KEY, crashed]);
    expect(alone.status).toBe(3);
    const checkpoint = join(dir, "crashed.checkpoint");
    writeFileSync(checkpoint, aegis(["checkpoint", "--signing-key", key, crashed]).stdout);
    const run = aegis(["verify", "--key", GOLDEN_KEY, "--checkpoint", checkpoint, crashed]);
    expect(run.status, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/^Verified \(pinned to 77a2c2f5/);
    expect(run.stdout).toContain(`anchored through line 2 by checkpoint ${checkpoint}`);
    const inFlight = alone.stdout.split("\n").filter((l) => l.startsWith("in_flight "));
    expect(inFlight).toEqual(["in_flight call-golden-0"]);
    for (const line of inFlight) expect(run.stdout).toContain(line);
  });

  it("refuses a checkpoint not signed by the Session's key, and a file that is no checkpoint (exit 2)", () => {
    const dir = tempDir();
    aegis(["keygen", "--out", join(dir, "stranger.key")]);
    const stranger = join(dir, "stranger.checkpoint");
    writeFileSync(stranger, signedCheckpoint(join(dir, "stranger.key"), readFileSync(GO_PATH("size-12/checkpoint"), "utf8").split("\n")[2] ?? "", 12));
    const run = aegis(["verify", "--key", GOLDEN_KEY, "--checkpoint", stranger, GOLDEN]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^Tampered: checkpoint .* is not signed by the key of the session holding line 12/);
    const junk = join(dir, "junk.checkpoint");
    writeFileSync(junk, "not a note\n");
    const bad = aegis(["verify", "--key", GOLDEN_KEY, "--checkpoint", junk, GOLDEN]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^error: read checkpoint .*junk\.checkpoint: no signature lines/);
    expect(bad.stderr).not.toMatch(STACK_TRACE);
  });
});

/** A checkpoint of `size` Lines under Go's origin stating `root` (base64), signed with the key file `key`. */
function signedCheckpoint(key: string, root: string, size: number): string {
  const seed = Buffer.from(readFileSync(key, "utf8").trim(), "hex");
  return signCheckpoint({ origin: "example.org/aegis/test", size, root: Buffer.from(root, "base64"), extensions: [] }, SigningKey.fromSeed(seed));
}
