/**
 * Strict lowercase hex. One digest has one spelling (SPEC §2): uppercase is refused, never
 * normalised, so two canonical forms of one line cannot hash differently.
 */

/** Why a hex string was refused; the text matches the reference's wording. */
export type HexFault =
  { readonly code: "wrong_length"; readonly expected: number; readonly found: number } | { readonly code: "not_lowercase_hex"; readonly position: number };

export function describeHexFault(fault: HexFault): string {
  return fault.code === "wrong_length"
    ? `expected ${fault.expected} hex characters, got ${fault.found}`
    : `not a lowercase hex character at position ${fault.position}`;
}

const LOWER_HEX = /^[0-9a-f]*$/;
const UTF8 = new TextEncoder();
const BYTE_HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Check `text` is exactly `length` lowercase hex characters (length counted in UTF-8 bytes). */
export function checkHex(text: string, length: number): HexFault | undefined {
  if (text.length === length && LOWER_HEX.test(text)) return undefined;
  const bytes = UTF8.encode(text);
  if (bytes.length !== length) return { code: "wrong_length", expected: length, found: bytes.length };
  const position = bytes.findIndex((c) => !((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)));
  return position === -1 ? undefined : { code: "not_lowercase_hex", position };
}

/** Lowercase hex of `bytes`, two digits a byte. */
export function toHex(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += BYTE_HEX[byte] ?? "";
  return text;
}

/** Decode hex already checked by {@link checkHex}. */
export function fromCheckedHex(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length >> 1);
  hexInto(text, bytes, 0);
  return bytes;
}

/** Decode hex already checked by {@link checkHex} into `into`, from byte `at` on. */
export function hexInto(text: string, into: Uint8Array, at: number): void {
  for (let i = 0; i + 1 < text.length; i += 2) into[at + (i >> 1)] = (digitValue(text.charCodeAt(i)) << 4) | digitValue(text.charCodeAt(i + 1));
}

/** A checked digit's value: `0`-`9` are 0x30-0x39, `a`-`f` 0x61-0x66. */
function digitValue(code: number): number {
  return code <= 0x39 ? code - 0x30 : code - 0x57;
}
