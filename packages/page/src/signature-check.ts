/**
 * Ed25519 in a worker of the page, under the strict rule of SPEC §8.5: steps 1 to 3 are the
 * format's own code; step 4 is WebCrypto's Ed25519 (native, about fifteen times faster
 * than JavaScript) where its answer is known to be the rule's, else noble's (adr/0015).
 */
import { fromCheckedHex, passesPrechecks, verifyStrict, verifyingKey, type VerifyingKey } from "@aegis/format/browser";
import type { Backend } from "./signature-messages.js";

const decoded = new Map<string, VerifyingKey | undefined>();
const imported = new Map<string, Promise<CryptoKey | undefined>>();
/** The keys imported so far, for a check that need not wait. */
const handles = new Map<string, CryptoKey | undefined>();
const MAX_KEYS = 1024;
let backend: Backend = "noble";

/** Choose the back end: noble when asked for, else WebCrypto where it answers RFC 8032's test as the rule does. */
export async function chooseBackend(wanted: Backend | "auto"): Promise<Backend> {
  backend = wanted === "noble" ? "noble" : (await webCryptoWorks()) ? "webcrypto" : "noble";
  return backend;
}

/**
 * Whether `signature` verifies `message` under the key `keyHex` (64 hex digits) by the strict
 * rule. Both are read before this returns (WebCrypto copies what it is given when called),
 * so a caller may write its next message into the same memory (piece-read.ts does).
 */
export function checkOne(keyHex: string, message: Uint8Array, signature: Uint8Array): boolean | Promise<boolean> {
  let key = decoded.get(keyHex);
  if (!decoded.has(keyHex)) {
    // A record may open a Session under a new key per Line: what is kept stays bounded.
    if (decoded.size >= MAX_KEYS) {
      decoded.clear();
      handles.clear();
      imported.clear();
    }
    const k = verifyingKey(fromCheckedHex(keyHex));
    key = typeof k === "string" ? undefined : k;
    decoded.set(keyHex, key);
  }
  // The walk sends only keys that decoded; a key that does not is never a pass.
  if (key === undefined) return false;
  if (backend === "webcrypto" && passesPrechecks(signature) && isCanonical(key.bytes) && isCanonical(signature.subarray(0, 32))) {
    if (handles.has(keyHex)) {
      const handle = handles.get(keyHex);
      return handle === undefined ? verifyStrict(key, message, signature) : crypto.subtle.verify("Ed25519", handle, plain(signature), plain(message));
    }
    // The key's first check waits for its import: the bytes are read after, so copied now.
    const [m, s] = [Uint8Array.from(message), Uint8Array.from(signature)];
    return webCryptoKey(keyHex, key.bytes).then((handle) => {
      handles.set(keyHex, handle);
      return handle === undefined ? verifyStrict(key, m, s) : crypto.subtle.verify("Ed25519", handle, s, m);
    });
  }
  return verifyStrict(key, message, signature);
}

function webCryptoKey(hex: string, bytes: Uint8Array): Promise<CryptoKey | undefined> {
  let handle = imported.get(hex);
  if (handle === undefined) {
    handle = crypto.subtle.importKey("raw", Uint8Array.from(bytes), { name: "Ed25519" }, false, ["verify"]).catch(() => undefined);
    imported.set(hex, handle);
  }
  return handle;
}

/** The same bytes over a plain ArrayBuffer, as WebCrypto takes them (a view of one is not copied). */
function plain(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const { buffer } = bytes;
  return buffer instanceof ArrayBuffer ? new Uint8Array(buffer, bytes.byteOffset, bytes.byteLength) : Uint8Array.from(bytes);
}

/**
 * Whether a point encoding is canonical (y below p = 2^255 - 19). WebCrypto is given only
 * canonical R and A: on those, BoringSSL's equation is dalek's cofactorless one and the
 * prechecks above are the rest of the rule; anything else takes noble's exact path.
 */
function isCanonical(encoding: Uint8Array): boolean {
  if (((encoding[31] ?? 0) & 0x7f) !== 0x7f) return true;
  for (let i = 30; i >= 1; i--) if (encoding[i] !== 0xff) return true;
  return (encoding[0] ?? 0) < 0xed;
}

/** RFC 8032 §7.1 test 1: WebCrypto has Ed25519 and answers it (a browser may lack either). */
async function webCryptoWorks(): Promise<boolean> {
  try {
    const key = await crypto.subtle.importKey("raw", plain(fromCheckedHex(RFC8032_KEY)), { name: "Ed25519" }, false, ["verify"]);
    const good = await crypto.subtle.verify("Ed25519", key, plain(fromCheckedHex(RFC8032_SIGNATURE)), new Uint8Array(0));
    const bad = plain(fromCheckedHex(RFC8032_SIGNATURE));
    bad[0] = (bad[0] ?? 0) ^ 1;
    return good && !(await crypto.subtle.verify("Ed25519", key, bad, new Uint8Array(0)));
  } catch {
    return false;
  }
}

const RFC8032_KEY = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const RFC8032_SIGNATURE = "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
