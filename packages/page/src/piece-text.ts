/**
 * The text of a row as the format's row reader decodes it, in a worker of the page: the
 * worker's build puts this module in place of `./text.js` for `wire/row-read.js` alone
 * (build.mjs), which imports only `decodeUtf8` from it. A piece of the record that is all
 * ASCII (most are: a writer escapes nothing else, SPEC §3) is decoded once, strictly, and a
 * row of it is its slice: ASCII's UTF-8 decoding is a character a byte. Any other row, or
 * a piece that is not all ASCII, is decoded as the format decodes it, by its own function.
 */
import { decodeUtf8 as formatDecodeUtf8 } from "@aegis/format/browser";

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
let piece: { readonly bytes: Uint8Array; readonly text: string } | undefined;

/** The piece the rows read next are views of; undefined: none. */
export function readingPiece(bytes: Uint8Array | undefined): void {
  piece = undefined;
  if (bytes === undefined) return;
  let text: string;
  try {
    text = strict.decode(bytes);
  } catch {
    return;
  }
  // As many characters as bytes: every byte was ASCII.
  if (text.length === bytes.length) piece = { bytes, text };
}

/**
 * `decodeUtf8` of `bytes`: a slice of the piece's text when they are a range of an ASCII piece.
 * Imported by no file of ours by this name: build.mjs puts this module in place of the format's.
 *
 * @public
 */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  const p = piece;
  if (p !== undefined && bytes.buffer === p.bytes.buffer) {
    const start = bytes.byteOffset - p.bytes.byteOffset;
    if (start >= 0 && start + bytes.length <= p.bytes.length) return p.text.slice(start, start + bytes.length);
  }
  return formatDecodeUtf8(bytes);
}
