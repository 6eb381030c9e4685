import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KeyFileError, SigningKey, readKeyFile, writeKeyFile, type KeyFileFault } from "../src/index.js";
import { tempDir } from "./support/chains.js";
import { faultOf as sharedFaultOf } from "./support/faults.js";

const faultOf = (promise: Promise<unknown>): Promise<KeyFileFault> => sharedFaultOf(promise, KeyFileError);

describe("key files, compatible with the reference's aegis keygen", () => {
  it("hold the seed as 64 lowercase hex and a newline, mode 0600, and read back to the same key", async () => {
    const path = join(tempDir(), "keys", "signing.key");
    const key = SigningKey.generate();
    await writeKeyFile(path, key);
    expect(readFileSync(path, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect((await readKeyFile(path)).keyId).toBe(key.keyId);
  });

  it("reads a key file the reference wrote (the development seed)", async () => {
    const path = join(tempDir(), "dev.key");
    writeFileSync(path, `${Buffer.from("aegis-insecure-dev-key-not-real!").toString("hex")}\n`, { mode: 0o600 });
    expect((await readKeyFile(path)).keyId).toBe("77a2c2f5952039243c043b69e7e812a2deb69e3271adb3013b8f24d3b8ea40f6");
  });

  it("refuses to overwrite without force; with force, replaces it and tightens the mode", async () => {
    const path = join(tempDir(), "k.key");
    await writeKeyFile(path, SigningKey.generate());
    expect(await faultOf(writeKeyFile(path, SigningKey.generate()))).toEqual({ code: "exists", path });
    chmodSync(path, 0o644);
    const replacement = SigningKey.generate();
    await writeKeyFile(path, replacement, { force: true });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect((await readKeyFile(path)).keyId).toBe(replacement.keyId);
  });

  it("refuses a missing file, naming the command that makes one", async () => {
    const path = join(tempDir(), "none.key");
    const fault = await faultOf(readKeyFile(path));
    expect(fault.code).toBe("missing");
    expect(new KeyFileError(fault).message).toBe(`no signing key at ${path}; generate one with \`aegis keygen --out ${path}\``);
  });

  it("refuses a key readable beyond its owner", async () => {
    const path = join(tempDir(), "open.key");
    writeFileSync(path, `${"ab".repeat(32)}\n`, { mode: 0o644 });
    chmodSync(path, 0o644);
    expect(new KeyFileError(await faultOf(readKeyFile(path))).message).toBe(`signing key ${path} is readable beyond its owner (mode 0644); chmod 600 it`);
  });

  const malformed: [string, string, string][] = [
    ["uppercase", `${"AB".repeat(32)}\n`, "expected lowercase hex, found 'A'"],
    ["a leading space", ` ${"ab".repeat(32)}`, "expected 64 characters, found 65"],
    ["a second line", `${"ab".repeat(32)}\n${"ab".repeat(32)}\n`, "expected 64 characters, found 129"],
    ["two trailing newlines", `${"ab".repeat(32)}\n\n`, "expected 64 characters, found 65"],
    ["too short", "abcd\n", "expected 64 characters, found 4"],
  ];
  it.each(malformed)("refuses %s", async (_, content, detail) => {
    const path = join(tempDir(), "bad.key");
    writeFileSync(path, content, { mode: 0o600 });
    const fault = await faultOf(readKeyFile(path));
    expect(fault).toEqual({ code: "malformed", path, detail });
  });

  it("accepts a key without a trailing newline, or with CRLF", async () => {
    const dir = tempDir();
    for (const [name, content] of [
      ["a", "ab".repeat(32)],
      ["b", `${"ab".repeat(32)}\r\n`],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, content, { mode: 0o600 });
      await expect(readKeyFile(path)).resolves.toBeInstanceOf(SigningKey);
    }
  });

  it("never prints the seed", () => {
    const key = SigningKey.generate();
    expect(String(key)).toBe(`SigningKey(key_id ${key.keyId})`);
    expect(JSON.stringify(key)).not.toContain(key.exportSeedHex());
  });
});
