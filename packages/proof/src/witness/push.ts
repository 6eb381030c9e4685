import { cosignatureTime, readCheckpointText } from "../checkpoint.js";
import { parseNote, type NoteSignature } from "../note.js";
import { recordConsistencyProof } from "../record-tree.js";
import type { NoteVerifier } from "../keys.js";
import { MAX_ANSWER_BYTES, SIZE_TYPE, cosignatureLines, formatAddCheckpoint, parseSizeAnswer } from "./protocol.js";

/**
 * Pushing a checkpoint to a witness (SPEC §19.6, `c2sp.org/tlog-witness`): with the size the
 * witness last cosigned for the origin and the consistency proof from it; on a 409, once
 * again from the size it names. Its answer is a cosignature (checked against the witness's
 * key before it is kept), evidence against the record (the witness holds a larger tree, or
 * refuses the proof: the record was cut or rewritten after it was shown to the witness), or a
 * fault of the witness's or the network's, which says nothing of the record.
 */
/** A witness as it is given: its verifier key (type 0x04), and its submission prefix (`add-checkpoint` is under it). */
interface WitnessTarget {
  readonly verifier: NoteVerifier;
  readonly url: string;
}

/** What came of pushing a checkpoint to one witness, named by its key and URL. */
export type PushResult = {
  /** The witness's verifier key (type 0x04), as given. */
  readonly verifier: NoteVerifier;
  /** Its submission prefix, as given. */
  readonly url: string;
} & (
  | {
      readonly code: "cosigned";
      readonly size: number;
      /** The cosignature line, with its newline, that checked. */
      readonly line: string;
    }
  | {
      readonly code: "evidence";
      /** `holds_larger`: it cosigned a larger tree than the record has; `proof_refused`: the record does not extend the tree it cosigned; `other_tree`: it cosigned another tree of this size. */
      readonly why: "holds_larger" | "proof_refused" | "other_tree";
      /** The size the witness holds for the origin. */
      readonly witnessSize: number;
      /** What it shows, in words (SPEC §19.6). */
      readonly detail: string;
    }
  | { readonly code: "fault"; readonly detail: string }
);

/** How long a witness is given to answer one request. */
const WITNESS_TIMEOUT_MS = 10_000;

/**
 * Push `note` (a signed checkpoint) to `witness`, starting from `oldSize` (0 when unknown).
 * `proofs` gives the consistency proof from an older size to the checkpoint's: the record's
 * path (its Lines are read for it), or a function.
 */
export async function pushCheckpoint(
  note: string,
  witness: { readonly verifier: NoteVerifier; readonly url: string },
  proofs: string | ((old: number) => Promise<readonly Buffer[]>),
  oldSize = 0,
  timeoutMs = WITNESS_TIMEOUT_MS,
): Promise<PushResult> {
  const parsed = parseNote(Buffer.from(note, "utf8"));
  const checkpoint = readCheckpointText(parsed.text);
  const proofFrom = typeof proofs === "string" ? (old: number) => recordConsistencyProof(proofs, old, checkpoint.size) : proofs;
  const named = { verifier: witness.verifier, url: witness.url };
  const fault = (detail: string): PushResult => ({ ...named, code: "fault", detail });
  const endpoint = `${witness.url.replace(/\/+$/, "")}/add-checkpoint`;
  for (let old = oldSize, tries = 0; ; tries += 1) {
    if (old > checkpoint.size) return evidence(named, "holds_larger", old, checkpoint.origin);
    const proof = old === 0 || old === checkpoint.size ? [] : await proofFrom(old);
    const answer = await post(endpoint, formatAddCheckpoint({ old, proof, checkpoint: Buffer.from(note, "utf8") }), timeoutMs);
    if (answer.code === "failed") return fault(answer.detail);
    const { status, type, body } = answer;
    if (status === 200) {
      const lines = cosignatureLines(body);
      if (lines === undefined) return fault("it answered 200 with no cosignature lines");
      // Only a line by this witness's key is kept, and only when it checks (C2SP: ignore unknown keys).
      const ours = lines
        .map((line) => ({ line, signature: signatureOf(line) }))
        .filter((l) => l.signature !== undefined && isBy(l.signature, witness.verifier));
      if (ours.length === 0) return fault("it answered no cosignature by its key");
      const good = ours.find((l) => l.signature !== undefined && cosignatureTime(parsed.text, l.signature, witness.verifier) !== undefined);
      if (good === undefined) return fault("its cosignature does not verify under its key");
      return { ...named, code: "cosigned", size: checkpoint.size, line: good.line };
    }
    if (status === 409) {
      const held = type === SIZE_TYPE ? parseSizeAnswer(body) : undefined;
      if (held === undefined) return fault(`it answered 409 without its size (${SIZE_TYPE})`);
      if (held > checkpoint.size) return evidence(named, "holds_larger", held, checkpoint.origin);
      if (held === old) return evidence(named, "other_tree", held, checkpoint.origin);
      if (tries > 0) return fault(`it answered 409 twice, now with size ${held}`);
      old = held;
      continue;
    }
    if (status === 422) return evidence(named, "proof_refused", old, checkpoint.origin);
    return fault(`it answered ${status}${body === "" ? "" : `: ${firstLine(body)}`}`);
  }
}

/** Evidence against the record, with what it shows in words. */
function evidence(named: WitnessTarget, why: "holds_larger" | "proof_refused" | "other_tree", witnessSize: number, origin: string): PushResult {
  const detail =
    why === "holds_larger"
      ? `it holds a tree of ${witnessSize} lines for ${origin}: the record was cut below what it cosigned`
      : why === "proof_refused"
        ? `it refused the consistency proof from its ${witnessSize} lines for ${origin}: the record does not extend what it cosigned (rewritten)`
        : `it cosigned another tree of ${witnessSize} lines for ${origin}: the record was rewritten`;
  return { ...named, code: "evidence", why, witnessSize, detail };
}

/** The signature a line holds, read as a note's signature line. */
function signatureOf(line: string): NoteSignature | undefined {
  try {
    return parseNote(Buffer.from(`x\n\n${line}`)).signatures[0];
  } catch {
    return undefined;
  }
}

function isBy(signature: NoteSignature, verifier: NoteVerifier): boolean {
  return signature.name === verifier.name && signature.keyId === verifier.keyId;
}

type Answer =
  { readonly code: "answered"; readonly status: number; readonly type: string; readonly body: string } | { readonly code: "failed"; readonly detail: string };

/** One POST, the whole exchange within `timeoutMs`, at most {@link MAX_ANSWER_BYTES} of answer read. */
async function post(url: string, body: Buffer, timeoutMs: number): Promise<Answer> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, {
      method: "POST",
      body: Uint8Array.from(body),
      signal,
      headers: { "content-type": "text/plain; charset=utf-8" },
      redirect: "error",
    });
    const reader = response.body?.getReader();
    const parts: Uint8Array[] = [];
    let bytes = 0;
    for (let read = await reader?.read(); read !== undefined && !read.done; read = await reader?.read()) {
      bytes += read.value.length;
      if (bytes > MAX_ANSWER_BYTES) {
        await reader?.cancel();
        return { code: "failed", detail: `its answer is over ${MAX_ANSWER_BYTES} bytes` };
      }
      parts.push(read.value);
    }
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    return { code: "answered", status: response.status, type, body: Buffer.concat(parts).toString("utf8") };
  } catch (error) {
    if (signal.aborted) return { code: "failed", detail: `no answer within ${timeoutMs / 1000} s` };
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return { code: "failed", detail: `${error instanceof Error ? error.message : String(error)}${cause}` };
  }
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").slice(0, 200);
}
