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

/** Check `text` is exactly `length` lowercase hex characters (length counted in UTF-8 bytes). */
export function checkHex(text: string, length: number): HexFault | undefined {
  if (text.length === length && LOWER_HEX.test(text)) return undefined;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length !== length) return { code: "wrong_length", expected: length, found: bytes.length };
  const position = bytes.findIndex((c) => !((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)));
  return position === -1 ? undefined : { code: "not_lowercase_hex", position };
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Decode hex already checked by {@link checkHex}. */
export function fromCheckedHex(text: string): Uint8Array {
  return Buffer.from(text, "hex");
}
