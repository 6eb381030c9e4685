import { MAX_NOTE_BYTES, decodeBase64 } from "../note.js";

/**
 * The wire of `c2sp.org/tlog-witness` (SPEC §19.6): an `add-checkpoint` request body, and
 * the two answers a client reads, the witness's size (`text/x.tlog.size`) and its
 * cosignature lines. What the client writes and what the witness reads are one module, so
 * that the two cannot drift apart.
 */

/** A witness never takes more than 63 proof lines (C2SP tlog-witness). */
const MAX_PROOF_LINES = 63;
/** The largest body read: a note, 63 proof lines of 44 characters and an old size line. */
export const MAX_REQUEST_BYTES = MAX_NOTE_BYTES + MAX_PROOF_LINES * 45 + 32;
/** The largest answer a client reads: a few cosignature lines, or a size. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** The media type of a witness's size in a 409. */
export const SIZE_TYPE = "text/x.tlog.size";

/** What a client asks a witness to cosign. */
export interface AddCheckpoint {
  /** The size of the tree the witness last cosigned for the origin (0: none). */
  readonly old: number;
  /** The RFC 6962 consistency proof from `old` to the checkpoint's size. */
  readonly proof: readonly Buffer[];
  /** The signed checkpoint, as its log signed it. */
  readonly checkpoint: Buffer;
}

/** The request body: `old <size>`, a line per proof hash in base64, an empty line, the checkpoint. */
export function formatAddCheckpoint(request: AddCheckpoint): Buffer {
  const head = [`old ${request.old}`, ...request.proof.map((h) => h.toString("base64")), ""].map((l) => `${l}\n`).join("");
  return Buffer.concat([Buffer.from(head, "utf8"), request.checkpoint]);
}

/** A request body that is not one, and why (the witness answers 400). */
export interface Malformed {
  readonly code: "malformed";
  readonly detail: string;
}

/** Read a request body; the checkpoint after the empty line is left for the note reader. */
export function parseAddCheckpoint(body: Buffer): ({ readonly code: "request" } & AddCheckpoint) | Malformed {
  const malformed = (detail: string): Malformed => ({ code: "malformed", detail });
  if (body.length > MAX_REQUEST_BYTES) return malformed(`over ${MAX_REQUEST_BYTES} bytes`);
  const proof: Buffer[] = [];
  let at = 0;
  let old: number | undefined;
  for (;;) {
    const end = body.indexOf(0x0a, at);
    if (end === -1) return malformed("no empty line before the checkpoint");
    const line = body.subarray(at, end).toString("latin1");
    at = end + 1;
    if (old === undefined) {
      const size = /^old (0|[1-9][0-9]*)$/.exec(line)?.[1];
      if (size === undefined || !Number.isSafeInteger(Number(size))) return malformed("the first line is not `old <size>`, a decimal with no leading zero");
      old = Number(size);
      continue;
    }
    if (line === "") break;
    const hash = decodeBase64(line);
    if (hash === undefined || hash.length !== 32) return malformed(`proof line ${proof.length + 1} is not the base64 of 32 bytes`);
    if (proof.length === MAX_PROOF_LINES) return malformed(`more than ${MAX_PROOF_LINES} proof lines`);
    proof.push(hash);
  }
  return { code: "request", old, proof, checkpoint: body.subarray(at) };
}

/** A 409's body: the witness's size, in decimal, and a newline; undefined when it is not that. */
export function parseSizeAnswer(body: string): number | undefined {
  const size = /^(0|[1-9][0-9]*)\n$/.exec(body)?.[1];
  return size === undefined || !Number.isSafeInteger(Number(size)) ? undefined : Number(size);
}

/** A 200's body: its note signature lines (`— <name> <base64>`), each with its newline. */
export function cosignatureLines(body: string): string[] | undefined {
  if (body === "" || !body.endsWith("\n")) return undefined;
  const lines = body.slice(0, -1).split("\n");
  return lines.every((l) => /^\u2014 \S+ \S+$/.test(l)) ? lines.map((l) => `${l}\n`) : undefined;
}
