/**
 * A signature worker of the page: checks batches of Ed25519 signatures under the strict rule
 * of SPEC §8.5 and answers with the index of the first that fails. Steps 1 to 3 are the
 * format's own code; step 4 is WebCrypto's Ed25519 (native, about fifteen times faster
 * than JavaScript) where its answer is known to be the rule's, else noble's (adr/0015).
 */
import { LineHash, checksOf, fromCheckedHex, passesPrechecks, verifyStrict, verifyingKey, type EncodedBatch, type VerifyingKey } from "@aegis/format/browser";
import type { Backend, WorkerAnswer, WorkerRequest } from "./signature-messages.js";

interface WorkerScope {
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerAnswer, transfer?: Transferable[]): void;
}
declare const self: WorkerScope;

const decoded = new Map<string, VerifyingKey | undefined>();
const imported = new Map<string, Promise<CryptoKey | undefined>>();
let backend: Backend = "noble";
/** Requests are answered in order: a batch waits for the hello that chose the back end. */
let queue: Promise<void> = Promise.resolve();

self.onmessage = (event) => {
  const request = event.data;
  queue = queue.then(() => {
    switch (request.code) {
      case "hello":
        return hello(request.backend);
      case "batch":
        return answer(request.id, request.batch);
      case "check":
        return checkAlone(request.id, request.key, request.message, request.signature);
      case "hash":
        return hashRows(request.id, request.base, request.bytes);
    }
  });
};

async function checkAlone(id: number, key: string, message: Uint8Array, signature: Uint8Array): Promise<void> {
  const valid = /^(?:[0-9a-f]{2})*$/.test(key) && (await checkOne(key, message, signature));
  self.postMessage({ code: "valid", id, valid });
}

/**
 * The LineHash of every row in `bytes` (whole rows of the record from byte `base` on), split
 * as the format's row splitter splits them: at each LF, a CR before it left out. The page
 * uses one only for a row whose bytes are exactly these (hashes-ahead.ts).
 */
function hashRows(id: number, base: number, bytes: Uint8Array): void {
  const offsets: number[] = [];
  const lengths: number[] = [];
  const hex: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    const length = end > start && bytes[end - 1] === 0x0d ? end - 1 - start : end - start;
    if (length > 0) {
      offsets.push(base + start);
      lengths.push(length);
      hex.push(LineHash.of(bytes.subarray(start, start + length)));
    }
    start = end + 1;
  }
  const answer = { code: "hashed", id, offsets: Uint32Array.from(offsets), lengths: Uint32Array.from(lengths), hex: hex.join("") } as const;
  self.postMessage(answer, [answer.offsets.buffer, answer.lengths.buffer]);
}

async function hello(wanted: Backend | "auto"): Promise<void> {
  backend = wanted === "noble" ? "noble" : (await webCryptoWorks()) ? "webcrypto" : "noble";
  self.postMessage({ code: "ready", backend });
}

async function answer(id: number, batch: EncodedBatch): Promise<void> {
  try {
    self.postMessage({ code: "checked", id, failed: await firstFailure(batch) });
  } catch (error) {
    self.postMessage({ code: "failed", id, message: error instanceof Error ? error.message : String(error) });
  }
}

async function firstFailure(batch: EncodedBatch): Promise<number> {
  const results: (boolean | Promise<boolean>)[] = [];
  for (const check of checksOf(batch)) results.push(checkOne(check.key, check.message, check.signature));
  for (let i = 0; i < results.length; i++) if (!(await results[i])) return i;
  return -1;
}

function checkOne(keyHex: string, message: Uint8Array, signature: Uint8Array): boolean | Promise<boolean> {
  let key = decoded.get(keyHex);
  if (!decoded.has(keyHex)) {
    const k = verifyingKey(fromCheckedHex(keyHex));
    key = typeof k === "string" ? undefined : k;
    decoded.set(keyHex, key);
  }
  // The walk sends only keys that decoded; a key that does not is never a pass.
  if (key === undefined) return false;
  if (backend === "webcrypto" && passesPrechecks(signature) && isCanonical(key.bytes) && isCanonical(signature.subarray(0, 32))) {
    return webCryptoKey(keyHex, key.bytes).then((handle) =>
      handle === undefined ? verifyStrict(key, message, signature) : crypto.subtle.verify("Ed25519", handle, plain(signature), plain(message)),
    );
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
