import { randomBytes } from "node:crypto";
import { KeyId } from "../wire/digest.js";
import { seedKey, signWith, type Ed25519Seed } from "./ed25519-sign.js";
import { toHex } from "../wire/hex.js";

/**
 * The key a writer signs a Session with (SPEC §8.4). The seed is the private key; it is
 * never printed: `toString` and `inspect` show the key id only.
 */
export class SigningKey {
  /** The 32-byte Ed25519 public key, which the Session's `open` Line publishes. */
  readonly publicKey: Uint8Array;
  /** The public key as 64 lowercase hex: what `aegis verify --key` and a trust store take. */
  readonly publicKeyHex: string;
  /** SHA-256 of the public key: the `key_id` every signed Line carries (SPEC §8.4). */
  readonly keyId: KeyId;
  readonly #key: Ed25519Seed;
  readonly #seed: Uint8Array;

  private constructor(seed: Uint8Array) {
    this.#seed = Uint8Array.from(seed);
    this.#key = seedKey(this.#seed);
    this.publicKey = this.#key.publicKey;
    this.publicKeyHex = toHex(this.publicKey);
    this.keyId = KeyId.of(this.publicKey);
  }

  /**
   * The key whose private seed is `seed`: 32 bytes, as a key file holds them. The bytes are
   * copied, so the caller may wipe its own.
   *
   * @throws RangeError unless `seed` is 32 bytes.
   */
  static fromSeed(seed: Uint8Array): SigningKey {
    return new SigningKey(seed);
  }

  /** A fresh key from the operating system's CSPRNG. */
  static generate(): SigningKey {
    return new SigningKey(randomBytes(32));
  }

  /** Ed25519 over `message`; deterministic. */
  sign(message: Uint8Array): Uint8Array {
    return signWith(this.#key, message);
  }

  /** The seed as the key file stores it: 64 lowercase hex. Handle with care. */
  exportSeedHex(): string {
    return toHex(this.#seed);
  }

  /** True for the published development key, which must never sign a record kept on disk. */
  get isInsecureDevKey(): boolean {
    return this.keyId === INSECURE_DEV_KEY_ID;
  }

  /** `SigningKey(key_id <hex>)`: the key id only, so that logging a key never leaks its seed. */
  toString(): string {
    return `SigningKey(key_id ${this.keyId})`;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/**
 * The reference implementation's public, worthless development seed. Its signatures prove
 * only that *some* build wrote a line; it exists so golden vectors are reproducible.
 */
const INSECURE_DEV_SEED: Uint8Array = new TextEncoder().encode("aegis-insecure-dev-key-not-real!");
const INSECURE_DEV_KEY_ID = "77a2c2f5952039243c043b69e7e812a2deb69e3271adb3013b8f24d3b8ea40f6";

/** **Insecure**: for tests and vectors only. See `INSECURE_DEV_SEED`. */
export function insecureDevKey(): SigningKey {
  return SigningKey.fromSeed(INSECURE_DEV_SEED);
}
