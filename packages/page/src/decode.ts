/**
 * The record travels in the page as base64: every byte kept exactly as it is in the file
 * (a record may hold bytes that are not UTF-8, and its verdict depends on each one).
 */

declare global {
  interface Uint8ArrayConstructor {
    /** ES2026; Chromium has it, older browsers do not. */
    fromBase64?(text: string): Uint8Array;
  }
}

/**
 * The bytes `text` encodes. Both decoders skip ASCII whitespace (the page's base64 is in
 * lines), so a record of 100 MB is not copied once more to remove it.
 */
export function fromBase64(text: string): Uint8Array {
  if (Uint8Array.fromBase64 !== undefined) return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * The record a page carries: base64, of its gzip when `data-encoding="gzip"`, inflated by
 * the browser and held to `data-size`, the byte count `aegis report` read.
 */
export async function embeddedRecord(element: HTMLElement): Promise<Uint8Array> {
  const packed = fromBase64(element.textContent ?? "");
  if (element.dataset["encoding"] !== "gzip") return packed;
  const size = Number(element.dataset["size"]);
  const bytes = new Uint8Array(size);
  const reader = new Blob([Uint8Array.from(packed)]).stream().pipeThrough(new DecompressionStream("gzip")).getReader();
  let at = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.length > size) throw new Error(`the record in this page inflates to more than the ${size} bytes it says`);
    bytes.set(value, at);
    at += value.length;
  }
  if (at !== size) throw new Error(`the record in this page inflates to ${at} bytes, not the ${size} it says`);
  return bytes;
}
