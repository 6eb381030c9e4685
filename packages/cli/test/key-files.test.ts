import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GOLDEN, GOLDEN_KEY_ID, GOLDEN_PUBLIC_KEY, STACK_TRACE, aegis, tempDir, type Run } from "./support.js";

/**
 * SPEC §13.6 through the real CLI: public key files are written in a form no signing-key
 * reader takes, and every `--signing-key` refuses a public key, with an error that says so
 * and never a hint to chmod it. A public key taken for a seed would let anyone holding it
 * sign as that key.
 */

const HEADER = "# aegis ed25519 public key";

function keygen(path: string): { readonly publicKey: string; readonly run: Run } {
  const run = aegis(["keygen", "--out", path]);
  expect(run.status).toBe(0);
  return { publicKey: /^public_key ([0-9a-f]{64})$/m.exec(run.stdout)?.[1] ?? "", run };
}

/** wrap refused before it starts the server or touches the record. */
function refusedWrap(signingKey: string, dir: string): Run {
  const audit = join(dir, "record.aarl");
  const run = aegis(["wrap", "--audit", audit, "--signing-key", signingKey, "--", "true"]);
  expect(run.status).toBe(1);
  expect(run.stdout).toBe("");
  expect(run.stderr).not.toMatch(STACK_TRACE);
  expect(existsSync(audit)).toBe(false);
  return run;
}

describe("aegis keygen writes the public key beside the signing key", () => {
  it("signing.key -> signing.pub, the header then the key, mode 0644; other names get .pub added", () => {
    const dir = tempDir();
    const { publicKey } = keygen(join(dir, "signing.key"));
    expect(readFileSync(join(dir, "signing.pub"), "utf8")).toBe(`${HEADER}\n${publicKey}\n`);
    expect(statSync(join(dir, "signing.pub")).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(dir, "signing.key"), "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    const other = keygen(join(dir, "agent-7"));
    expect(readFileSync(join(dir, "agent-7.pub"), "utf8")).toBe(`${HEADER}\n${other.publicKey}\n`);
  });

  it("refuses a name ending in .pub, and an existing public key file without --force, writing nothing", () => {
    const dir = tempDir();
    const pub = aegis(["keygen", "--out", join(dir, "signing.pub")]);
    expect(pub.status).toBe(1);
    expect(pub.stderr).toMatch(/^error: --out .*signing\.pub: a name ending in \.pub is a public key file's/m);
    expect(existsSync(join(dir, "signing.pub"))).toBe(false);

    writeFileSync(join(dir, "signing.pub"), "someone else's\n");
    const refused = aegis(["keygen", "--out", join(dir, "signing.key")]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`error: key file ${join(dir, "signing.pub")} already exists; refusing to overwrite it without --force\n`);
    expect(existsSync(join(dir, "signing.key"))).toBe(false);
    const forced = aegis(["keygen", "--out", join(dir, "signing.key"), "--force"]);
    expect(forced.status).toBe(0);
    expect(readFileSync(join(dir, "signing.pub"), "utf8")).toMatch(new RegExp(`^${HEADER}\\n[0-9a-f]{64}\\n$`));
  });

  it("a public key file is a trust store of one key; --key takes its text too", () => {
    const dir = tempDir();
    const pub = join(dir, "golden.pub");
    writeFileSync(pub, `${HEADER}\n${GOLDEN_PUBLIC_KEY}\n`);
    for (const args of [
      ["--trust-store", pub],
      ["--key", readFileSync(pub, "utf8").trimEnd()],
    ]) {
      const run = aegis(["verify", ...args, GOLDEN]);
      expect(run.status, args[0]).toBe(0);
      expect(run.stdout.split("\n")[0]).toBe(`Verified (pinned to ${GOLDEN_KEY_ID})`);
    }
  });

  it("a signing key given as a trust store is refused, naming the file and why (exit 2), not read as public keys", () => {
    const dir = tempDir();
    const key = join(dir, "signing.key");
    keygen(key);
    const record = join(dir, "r.aarl");
    // A Session signed by the key, its server gone at once: a record to verify.
    aegis(["wrap", "--audit", record, "--signing-key", key, "--", "true"]);
    expect(existsSync(record)).toBe(true);
    const run = aegis(["verify", "--trust-store", key, record]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(
      `error: read trust store ${key}: it is a signing key (a seed): the public key file beside it, ${join(dir, "signing.pub")}, holds its public key`,
    );
    // Moved away from its public key file, its name still says what it is.
    const alone = join(tempDir(), "agent.key");
    copyFileSync(key, alone);
    expect(aegis(["recheck", "--trust-store", alone, "--policy", "/dev/null", record]).stderr).toContain("it looks like a signing key");
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });
});

describe("--signing-key refuses a public key (SPEC §13.6)", () => {
  it("keygen's signing.pub, as written (0644) and after chmod 600: refused as a public key file, no chmod hint, exit 1", () => {
    const dir = tempDir();
    keygen(join(dir, "signing.key"));
    const pub = join(dir, "signing.pub");
    for (const mode of [0o644, 0o600]) {
      chmodSync(pub, mode);
      const run = refusedWrap(pub, dir);
      expect(run.stderr).toBe(
        `error: ${pub} is a public key file (its first line is \`${HEADER}\`), not a signing key: a public key cannot sign\n` +
          `help: give the signing key file \`aegis keygen --out <PATH>\` wrote (mode 0600), not ${pub}; the public key is for verifiers: \`aegis verify --trust-store <PATH>.pub\`\n`,
      );
      expect(run.stderr).not.toContain("chmod");
    }
    // And for a checkpoint: the same refusal, exit 1 (cli/src/fault.ts).
    const checkpoint = aegis(["checkpoint", "--signing-key", pub, GOLDEN]);
    expect(checkpoint.status).toBe(1);
    expect(checkpoint.stdout).toBe("");
    expect(checkpoint.stderr).toMatch(/^error: .*signing\.pub is a public key file .*not a signing key: a public key cannot sign\n/);
  });

  it("the demo's signing.pub is refused; its signing.key is taken", () => {
    const dir = tempDir();
    expect(aegis(["demo", "--out", join(dir, "demo")]).status).toBe(0);
    const demo = join(dir, "demo");
    expect(readFileSync(join(demo, "signing.pub"), "utf8")).toMatch(new RegExp(`^${HEADER}\\n[0-9a-f]{64}\\n$`));
    expect(statSync(join(demo, "signing.key")).mode & 0o777).toBe(0o600);
    expect(refusedWrap(join(demo, "signing.pub"), dir).stderr).toMatch(/^error: .*signing\.pub is a public key file/);
    const audit = join(dir, "taken.aarl");
    const taken = aegis(["wrap", "--audit", audit, "--signing-key", join(demo, "signing.key"), "--", "true"]);
    expect(taken.stderr).not.toContain("error:");
    expect(aegis(["verify", "--trust-store", join(demo, "signing.pub"), audit]).status).toBe(0);
  });

  it("bare hex equal to the public key file beside it: refused, at 0644 and at 0600, before the mode", () => {
    const dir = tempDir();
    const { publicKey } = keygen(join(dir, "signing.key"));
    // The public key copied into a file named as a signing key, its .pub beside it.
    const copy = join(dir, "copy.key");
    writeFileSync(copy, `${publicKey}\n`);
    copyFileSync(join(dir, "signing.pub"), join(dir, "copy.pub"));
    for (const mode of [0o644, 0o600]) {
      chmodSync(copy, mode);
      const run = refusedWrap(copy, dir);
      expect(run.stderr).toContain(`error: ${copy} holds the public key that ${join(dir, "copy.pub")} holds, not a signing key: a public key cannot sign\n`);
      expect(run.stderr).not.toContain("chmod");
    }
  });

  it("an earlier demo's bare-hex signing.pub and keygen's printed public key: refused as public keys", () => {
    const dir = tempDir();
    const { publicKey, run } = keygen(join(dir, "signing.key"));
    mkdirSync(join(dir, "old"));
    const old = join(dir, "old", "signing.pub");
    writeFileSync(old, `${publicKey}\n`, { mode: 0o600 });
    expect(refusedWrap(old, dir).stderr).toContain(`error: ${old} is named as a public key file (.pub), not a signing key: a public key cannot sign\n`);
    const printed = join(dir, "printed.key");
    writeFileSync(printed, run.stdout, { mode: 0o600 });
    expect(refusedWrap(printed, dir).stderr).toContain(
      `error: ${printed} holds a public key as \`aegis keygen\` prints it (\`public_key <hex>\`), not a signing key: a public key cannot sign\n`,
    );
  });

  it("a secret seed readable by others: the advice to make it private is conditional on it being the secret", () => {
    const dir = tempDir();
    const key = join(dir, "loose.key");
    keygen(key);
    chmodSync(key, 0o644);
    const run = refusedWrap(key, dir);
    expect(run.stderr).toBe(
      `error: signing key ${key} is readable beyond its owner (mode 0644): a signing key must be private\n` +
        `help: if it is the secret seed \`aegis keygen --out\` wrote, run \`chmod 600 ${key}\`, and make a new key if others may have read it; a public key cannot sign: give the signing key instead\n`,
    );
  });
});
