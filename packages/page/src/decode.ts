/**
 * The record travels in the page as base64: every byte kept exactly as it is in the file
 * (a record may hold bytes that are not UTF-8, and its verdict depends on each one).
 */

declare global {
  interface Uint8ArrayConstructor {
    /** ES2026; Chromium has it, older browsers do not. */
    fromBase64?(text: string): Uint8Array<ArrayBuffer>;
  }
}

/**
 * The bytes `text` encodes. Both decoders skip ASCII whitespace (the page's base64 is in
 * lines), so a record of 100 MB is not copied once more to remove it.
 */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  if (Uint8Array.fromBase64 !== undefined) return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * A record's bytes as they arrive (issue 31: the walk begins on the first of them, while
 * the rest inflate): `bytes` is the whole record's size from the start, and `available`
 * says how many of its first bytes are there.
 */
export interface RecordSource {
  readonly bytes: Uint8Array<ArrayBuffer>;
  /** How many bytes are there, once more than `have` are or all are; rejects when the record cannot be read. */
  available(have: number): Promise<number>;
  /** Every byte, once there. */
  readonly whole: Promise<Uint8Array<ArrayBuffer>>;
}

/** A record read whole already (a file dropped on the page). */
export function wholeRecord(bytes: Uint8Array<ArrayBuffer>): RecordSource {
  return { bytes, available: () => Promise.resolve(bytes.length), whole: Promise.resolve(bytes) };
}

/** Inflated bytes reach the page in pieces of about this many (the browser's own may be smaller). */
const CHUNK = 1 << 20;
/** Inflating gives the page's other tasks (the workers' answers) a turn this often, in ms. */
const YIELD_MS = 4;

const channel = new MessageChannel();
/** A task boundary without setTimeout's clamp. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
}

/**
 * The record a page carries: base64, of its gzip when `data-encoding="gzip"`, inflated by
 * the browser as the walk goes and held to `data-size`, the byte count `aegis report` read.
 */
export function embeddedRecord(element: HTMLElement): RecordSource {
  const packed = fromBase64(element.textContent ?? "");
  if (element.dataset["encoding"] !== "gzip") return wholeRecord(packed);
  const size = Number(element.dataset["size"]);
  if (!Number.isSafeInteger(size) || size < 0) throw new Error(`the record in this page gives no byte count it inflates to`);
  const bytes = new Uint8Array(size);
  let at = 0;
  let ended = false;
  let waiting: (() => void)[] = [];
  const wake = (): void => {
    const woken = waiting;
    waiting = [];
    for (const w of woken) w();
  };
  let next = 0;
  const input = new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull(controller) {
      if (next >= packed.length) controller.close();
      else controller.enqueue(packed.subarray(next, (next += CHUNK)));
    },
  });
  const whole = (async () => {
    try {
      const reader = input.pipeThrough(new DecompressionStream("gzip")).getReader();
      let yielded = performance.now();
      for (;;) {
        // The stream's steps are microtasks: without a task boundary now and then, the whole
        // record inflated before the page heard a worker's answer, and the workers waited.
        if (performance.now() - yielded > YIELD_MS) {
          await nextTask();
          yielded = performance.now();
        }
        const { done, value } = await reader.read();
        if (done) break;
        if (at + value.length > size) throw new Error(`the record in this page inflates to more than the ${size} bytes it says`);
        bytes.set(value, at);
        at += value.length;
        wake();
      }
      if (at !== size) throw new Error(`the record in this page inflates to ${at} bytes, not the ${size} it says`);
      return bytes;
    } finally {
      ended = true;
      wake();
    }
  })();
  // Whoever waits on `available` hears of a failure; this promise's own is not left unheard.
  whole.catch(() => undefined);
  const available = async (have: number): Promise<number> => {
    while (!ended && at <= have) await new Promise<void>((resolve) => waiting.push(resolve));
    if (ended) await whole;
    return at;
  };
  return { bytes, available, whole };
}
