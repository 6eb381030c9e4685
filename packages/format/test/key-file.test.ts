import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SigningKey, readKeyFile } from "../src/index.js";
import { publicKeyPathOf, writePublicKeyFile, isPublicKeyFileText, readKeyList, KeyFileError, writeKeyFile, type KeyFileFault } from "../src/internal.js";
import { PUBLIC_KEY_FILE_HEADER } from "../src/crypto/public-key-file.js";
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
    expect(new KeyFileError({ code: "exists", path }).message).toBe(`key file ${path} already exists; refusing to overwrite it without --force`);
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
    // No chmod in the text: the file may be a public key, and making it private would not make it a secret.
    expect(new KeyFileError(await faultOf(readKeyFile(path))).message).toBe(
      `signing key ${path} is readable beyond its owner (mode 0644): a signing key must be private`,
    );
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

describe("public key files, which no signing-key reader takes (SPEC §13.6)", () => {
  it("are written as the header and the key, mode 0644, and read as a list of one key", async () => {
    const path = join(tempDir(), "signing.pub");
    const key = SigningKey.generate();
    await writePublicKeyFile(path, key.publicKeyHex);
    const text = readFileSync(path, "utf8");
    expect(text).toBe(`# aegis ed25519 public key\n${key.publicKeyHex}\n`);
    expect(text.split("\n")[0]).toBe(PUBLIC_KEY_FILE_HEADER);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    expect(isPublicKeyFileText(text)).toBe(true);
    expect(readKeyList(text)).toEqual({ ok: true, keys: [key.publicKeyHex] });
    expect(await faultOf(writePublicKeyFile(path, key.publicKeyHex))).toEqual({ code: "exists", path });
  });

  it("a bare 64-hex file (the reference's form) is a list of one key too; anything else names its row", () => {
    expect(readKeyList(`${"ab".repeat(32)}\n`)).toEqual({ ok: true, keys: ["ab".repeat(32)] });
    expect(readKeyList(`# a comment\r\n\n  ${"cd".repeat(32)}  \n`)).toEqual({ ok: true, keys: ["cd".repeat(32)] });
    expect(readKeyList(`${PUBLIC_KEY_FILE_HEADER}\npublic_key ${"ab".repeat(32)}\n`)).toEqual({
      ok: false,
      row: 2,
      detail: "expected 64 hex characters, got 75",
    });
  });

  it("sit beside their signing key: signing.key -> signing.pub, any other name -> <name>.pub", () => {
    expect(publicKeyPathOf("/k/signing.key")).toBe("/k/signing.pub");
    expect(publicKeyPathOf("/k/signing")).toBe("/k/signing.pub");
    expect(publicKeyPathOf("/k/id_ed25519")).toBe("/k/id_ed25519.pub");
    expect(publicKeyPathOf("/k/.key")).toBe("/k/.key.pub");
  });

  const asSigningKey = async (name: string, content: string, mode = 0o600): Promise<{ path: string; fault: KeyFileFault }> => {
    const path = join(tempDir(), name);
    writeFileSync(path, content, { mode });
    chmodSync(path, mode);
    return { path, fault: await faultOf(readKeyFile(path)) };
  };
  const key = SigningKey.fromSeed(new Uint8Array(32).fill(4));

  it.each([0o600, 0o644])("a public key file given as a signing key is refused as one, at mode %o, and nothing says chmod", async (mode) => {
    const { path, fault } = await asSigningKey("id.pub", `${PUBLIC_KEY_FILE_HEADER}\n${key.publicKeyHex}\n`, mode);
    expect(fault).toEqual({ code: "public_key", path, found: { code: "public_key_file" } });
    const text = new KeyFileError(fault).message;
    expect(text).toBe(`${path} is a public key file (its first line is \`# aegis ed25519 public key\`), not a signing key: a public key cannot sign`);
    expect(text).not.toContain("chmod");
  });

  it("the public form is refused whatever the file is named, and with CRLF rows", async () => {
    const { path, fault } = await asSigningKey("signing.key", `${PUBLIC_KEY_FILE_HEADER}\r\n${key.publicKeyHex}\r\n`);
    expect(fault).toEqual({ code: "public_key", path, found: { code: "public_key_file" } });
  });

  it("keygen's printed public key saved to a file is refused as one", async () => {
    const { path, fault } = await asSigningKey("k.key", `public_key ${key.publicKeyHex}\nkey_id ${key.keyId}\n`, 0o644);
    expect(fault).toEqual({ code: "public_key", path, found: { code: "keygen_output" } });
  });

  it("a bare 64-hex file named .pub (an earlier demo's signing.pub) is refused, at any mode", async () => {
    for (const mode of [0o644, 0o600]) {
      const { path, fault } = await asSigningKey("signing.pub", `${key.publicKeyHex}\n`, mode);
      expect(fault).toEqual({ code: "public_key", path, found: { code: "pub_name" } });
    }
  });

  it("bare hex equal to the public key file beside it is refused; the mode is not looked at first", async () => {
    const dir = tempDir();
    const secret = join(dir, "signing.key");
    writeFileSync(secret, `${key.publicKeyHex}\n`, { mode: 0o644 });
    chmodSync(secret, 0o644);
    await writePublicKeyFile(join(dir, "signing.pub"), key.publicKeyHex);
    expect(await faultOf(readKeyFile(secret))).toEqual({
      code: "public_key",
      path: secret,
      found: { code: "equals_public_key_file", public_key_file: join(dir, "signing.pub") },
    });
    // The same beside a bare-hex public key file, and for a name without .key.
    const other = join(dir, "mine");
    writeFileSync(other, `${key.publicKeyHex}\n`, { mode: 0o600 });
    writeFileSync(join(dir, "mine.pub"), `${key.publicKeyHex}\n`);
    expect(await faultOf(readKeyFile(other))).toEqual({
      code: "public_key",
      path: other,
      found: { code: "equals_public_key_file", public_key_file: `${other}.pub` },
    });
  });

  it("bare hex equal to a public key given to the same reader is refused", async () => {
    const path = join(tempDir(), "x.key");
    writeFileSync(path, `${key.publicKeyHex}\n`, { mode: 0o600 });
    expect(await faultOf(readKeyFile(path, { publicKeys: ["ab".repeat(32), key.publicKeyHex] }))).toEqual({
      code: "public_key",
      path,
      found: { code: "equals_given_key" },
    });
  });

  it("the real signing key beside its own public key file reads; a public key file that is not one is no reason to fail", async () => {
    const dir = tempDir();
    const secret = join(dir, "signing.key");
    await writeKeyFile(secret, key);
    await writePublicKeyFile(join(dir, "signing.pub"), key.publicKeyHex);
    expect((await readKeyFile(secret, { publicKeys: [key.publicKeyHex] })).publicKeyHex).toBe(key.publicKeyHex);
    writeFileSync(join(dir, "signing.pub"), "not a key\n");
    expect((await readKeyFile(secret)).keyId).toBe(key.keyId);
  });
});
