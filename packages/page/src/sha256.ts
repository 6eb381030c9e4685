/**
 * SHA-256 (FIPS 180-4) as 64 lowercase hex, for the page's bundles: the page's build puts
 * this module where the format's browser entry has noble's (build.mjs). The same function,
 * written for one-shot hashing of a row: no hash object, no copy of the input but its last
 * block, the words read straight from the bytes. It hashes every Line of a record twice
 * over in the page (in the workers, then for the account), which made noble's (about
 * 12 µs a Line in Chromium) the page's largest cost after Ed25519 (issue 31, adr/0028).
 * test/sha256.test.ts holds it to Node's on every length a block boundary can matter at.
 */

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
  0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
  0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
  0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const INITIAL = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const W = new Int32Array(64);
const state = new Int32Array(8);
/** The last one or two blocks: the input's tail, the 0x80 byte, zeros and the bit length. */
const tail = new Uint8Array(128);
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const UTF8 = new TextEncoder();

/** One-shot SHA-256 of `input` (a string as its UTF-8) as 64 lowercase hex. */
export function sha256Hex(input: Uint8Array | string): string {
  const bytes = typeof input === "string" ? UTF8.encode(input) : input;
  const length = bytes.length;
  state.set(INITIAL);
  const whole = length - (length % 64);
  compress(bytes, 0, whole);
  const rest = length - whole;
  tail.fill(0);
  tail.set(bytes.subarray(whole), 0);
  tail[rest] = 0x80;
  const end = rest < 56 ? 64 : 128;
  // The length in bits, big-endian in the last 8 bytes (a length below 2^53 bytes).
  const high = Math.floor(length / 0x20000000);
  const low = (length * 8) >>> 0;
  tail[end - 8] = high >>> 24;
  tail[end - 7] = (high >>> 16) & 0xff;
  tail[end - 6] = (high >>> 8) & 0xff;
  tail[end - 5] = high & 0xff;
  tail[end - 4] = low >>> 24;
  tail[end - 3] = (low >>> 16) & 0xff;
  tail[end - 2] = (low >>> 8) & 0xff;
  tail[end - 1] = low & 0xff;
  compress(tail, 0, end);
  let hex = "";
  for (let i = 0; i < 8; i++) {
    const v = state[i] ?? 0;
    hex += (HEX[v >>> 24] ?? "") + (HEX[(v >>> 16) & 0xff] ?? "") + (HEX[(v >>> 8) & 0xff] ?? "") + (HEX[v & 0xff] ?? "");
  }
  return hex;
}

/** The compression function over the blocks of `p` in [at, end), a multiple of 64 bytes. */
function compress(p: Uint8Array, at: number, end: number): void {
  let h0 = state[0] ?? 0;
  let h1 = state[1] ?? 0;
  let h2 = state[2] ?? 0;
  let h3 = state[3] ?? 0;
  let h4 = state[4] ?? 0;
  let h5 = state[5] ?? 0;
  let h6 = state[6] ?? 0;
  let h7 = state[7] ?? 0;
  for (; at < end; at += 64) {
    for (let i = 0, j = at; i < 16; i++, j += 4) W[i] = ((p[j] ?? 0) << 24) | ((p[j + 1] ?? 0) << 16) | ((p[j + 2] ?? 0) << 8) | (p[j + 3] ?? 0);
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15] ?? 0;
      const y = W[i - 2] ?? 0;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (s1 + (W[i - 7] ?? 0) + s0 + (W[i - 16] ?? 0)) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + (K[i] ?? 0) + (W[i] ?? 0)) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  state[0] = h0;
  state[1] = h1;
  state[2] = h2;
  state[3] = h3;
  state[4] = h4;
  state[5] = h5;
  state[6] = h6;
  state[7] = h7;
}
