import { KeyId, PrevHash, chainsTo, tryParseDigest, type LineHash } from "../wire/digest.js";
import { verifyingKey } from "../crypto/ed25519.js";
import { checkHex, fromCheckedHex } from "../wire/hex.js";
import { isJsonObject, type JsonObject, type JsonValue } from "../wire/json.js";
import { readRow, unreadFinalRow, type ReadRow } from "../wire/row-read.js";
import { lineTypeOf, type LineType } from "../wire/line-types.js";
import { detachedString } from "../wire/text.js";
import type { Row } from "../wire/row-splitter.js";
import { signatureClaim, type SessionKey } from "../crypto/signing.js";
import type { IndeterminateReason, Position, SignatureFault, TamperedReason, Verification, Verdict } from "./verdict.js";
import { UnfinishedCallTally } from "./unfinished-calls.js";
import { CHECK_NOW, type SignatureChecker, type SignatureStop } from "./signature-checker.js";

/** A Line the walk accepted, for consumers that read records as they are verified. */
export interface WalkedLine {
  /** 1-based over non-blank rows. */
  readonly line: number;
  /** Byte offset of the row in the file. */
  readonly offset: number;
  /** Its position: Session index and `seq` (SPEC §7). */
  readonly at: Position;
  /** Its `line_type`: a known type, or a newer emitter's kept as written (SPEC §5.2). */
  readonly lineType: LineType;
  /** The parsed Line, every member included, known or not. */
  readonly value: JsonObject;
  /** SHA-256 of its canonical form, signature included: what the next Line chains to (SPEC §4). */
  readonly lineHash: LineHash;
  /**
   * The canonical form `lineHash` hashes (SPEC §3, §4), as bytes or as text to encode as
   * UTF-8: what a Merkle tree over the record takes as the Line's leaf data.
   */
  readonly canonical: () => Uint8Array | string;
}

/** What a walk takes of `VerifyOptions` (verify-options.ts, which imports this file): the trust set and the per-Line callback. */
export interface WalkOptions {
  /**
   * Public keys (64 lowercase hex) anchored out of band. Absent: an unpinned walk.
   * Present, even empty: every `open` Line's key must be in it (SPEC §8.4).
   */
  readonly trust?: readonly string[];
  /** Called for each accepted Line, in file order. */
  readonly onLine?: (line: WalkedLine) => void;
}

/** Why the walk stops at a Line: the tampered verdict itself (SPEC §8.3). */
type Stop = Extract<Verdict, { status: "tampered" }>;

/**
 * The verifier's state machine (SPEC §8): one pass, holding what the writer held (the
 * Session, the expected `seq`, the running tail, the Session's key) plus the first cap.
 * Feed it rows with {@link ChainWalk.step}; it never holds more than one row.
 *
 * Precedence, as in the reference: the first Tampered ends the walk; among the caps
 * (Indeterminate reasons) the first one wins; a later Tampered overrides a cap.
 */
export class ChainWalk {
  private sessionIndex: number | undefined;
  private expectedSeq = 0;
  private tail: LineHash | undefined;
  private sessionKey: SessionKey | undefined;
  private coverage: Position | undefined;
  private cap: IndeterminateReason | undefined;
  private inFlight: string[] = [];
  /** SPEC §13.4 `unfinished_calls`: intents of ended Sessions that have no outcome. */
  private readonly unfinished = new UnfinishedCallTally();
  private endsWithVerifiedClose = false;
  /** In first-seen order (a Set keeps it); a file may open 100,000 Sessions. */
  private readonly keyIds = new Set<KeyId>();
  private readonly trust: ReadonlySet<string> | undefined;
  /** `decided` (SPEC §8.1): the whole file's, never emptied at an `open`, as the reference's. */
  private readonly seenApprovals = new Set<string>();
  private rows = 0;
  private sessions = 0;
  /** A row that did not parse: torn if it is the last, malformed if anything follows. */
  private unparsed: { readonly line: number; readonly detail: string } | undefined;
  private stopped: Verdict | undefined;
  /** The current Line's signing input, joined from its canonical members on demand. */
  private readonly signingInput: { text: () => string; row: Uint8Array | undefined; cut: { readonly start: number; readonly end: number } | undefined } = {
    text: () => "",
    row: undefined,
    cut: undefined,
  };

  constructor(
    private readonly options: WalkOptions = {},
    private readonly checker: SignatureChecker = CHECK_NOW,
  ) {
    this.trust = options.trust === undefined ? undefined : new Set(options.trust);
  }

  /** The value parsed from the row last stepped, when it parsed: recheck reads Lines the walk has read. */
  lastValue: JsonValue | undefined;

  /** True once the verdict is fixed; further rows are ignored. */
  get done(): boolean {
    return this.stopped !== undefined;
  }

  /**
   * Walk one row. `read`, when given, is `readRow(row.bytes)` made elsewhere (a worker thread,
   * split-walk.ts); it must be exactly that, or a value holding every member this walk reads.
   */
  step(row: Row, read?: ReadRow): void {
    this.lastValue = undefined;
    if (this.stopped !== undefined) return;
    if (this.unparsed !== undefined) {
      // Step 1, a row that did not parse and was not the last [M8.1]: only the final row can
      // be a torn write, since a writer refuses to append onto one.
      this.stopped = tampered({ code: "malformed_line", line: this.unparsed.line, detail: this.unparsed.detail });
      return;
    }
    this.rows++;
    // §13.1: a row over the bound is not read.
    if (row.code === "too_long") {
      this.cap ??= { code: "line_too_long", line: row.number, limit: row.limit };
      this.stopped = { status: "indeterminate", reason: this.cap };
      return;
    }
    const result = this.accept(row, read ?? readRow(row.bytes));
    if (result !== undefined) this.stopped = result;
  }

  /**
   * The result of a walk whose deferred signature check at `stop` failed: what the
   * sequential walk, which would have checked it at once, stops with. Exact when `stop` is
   * the first deferred check to fail, since every Line before it then read as it did.
   */
  finishAt(stop: SignatureStop): Verification {
    return {
      verdict: tampered({ code: "bad_signature", at: stop.at, source: { code: "bad_signature" } }),
      ...(stop.coverage === undefined ? {} : { coverage: stop.coverage }),
      key_ids: [...this.keyIds].slice(0, stop.keyIds),
      trust: "unpinned",
      lines: stop.rows,
      sessions: stop.sessions,
      ...(stop.head === undefined ? {} : { head: stop.head }),
      unfinished_calls: this.unfinished.result(stop.unfinished),
    };
  }

  /** The verdict, once every row has been stepped (§8.2, "After the last row"; precedence [M8.5]). */
  finish(): Verification {
    let verdict = this.stopped;
    if (verdict === undefined) {
      if (this.unparsed !== undefined) this.cap ??= { code: "torn_final_line", line: this.unparsed.line };
      if (this.rows === 0) verdict = { status: "indeterminate", reason: { code: "empty_chain" } };
      else if (this.cap !== undefined) verdict = { status: "indeterminate", reason: this.cap };
      else if (this.endsWithVerifiedClose) verdict = { status: "verified" };
      else {
        verdict = {
          status: "indeterminate",
          reason: { code: "unanchored_tail", session_index: this.sessionIndex ?? 0, in_flight: [...this.inFlight] },
        };
      }
    }
    // SPEC §13.4: a last Session that closed has ended; one without a close may still be
    // running its calls, and `unanchored_tail` speaks for it.
    if (verdict.status !== "tampered" && this.endsWithVerifiedClose && this.sessionIndex !== undefined) this.unfinished.endSession(this.sessionIndex);
    return {
      verdict,
      ...(this.coverage === undefined ? {} : { coverage: this.coverage }),
      key_ids: [...this.keyIds],
      trust: this.trust !== undefined && verdict.status === "verified" ? "pinned" : "unpinned",
      lines: this.rows,
      sessions: this.sessions,
      ...(this.tail === undefined ? {} : { head: this.tail }),
      unfinished_calls: this.unfinished.result(),
    };
  }

  private accept(row: Extract<Row, { code: "row" }>, read: ReadRow): Stop | undefined {
    const line = row.number; // SPEC §8.3 names a row number `line`
    // Steps 1-2: parse, canonicalize, hash (`read`).
    if (!read.ok) {
      // Only a row that could be torn waits to learn whether it is the last (step 1).
      if (unreadFinalRow(read) === "tampered") return malformed(line, read.detail);
      this.unparsed = { line, detail: read.detail };
      return undefined;
    }
    const { value, lineHash, canonical } = read;
    this.lastValue = value;
    this.signingInput.text = read.signingInput;
    this.signingInput.row = row.bytes;
    this.signingInput.cut = read.signingCut;
    // Step 3: the header.
    if (!isJsonObject(value) || typeof value["line_type"] !== "string") return malformed(line, "no line_type");
    const lineType = lineTypeOf(value["line_type"]);
    const seq = value["seq"];
    if (typeof seq !== "number") return malformed(line, "no seq");
    const prevText = value["prev_hash"];
    if (typeof prevText !== "string") return malformed(line, "no prev_hash");
    // The back-reference a writer wrote is the digest already held, so it needs no parse.
    const prev = prevText === this.tail || prevText === PrevHash.GENESIS ? (prevText as PrevHash) : parsedPrev(prevText);
    if (prev === undefined) return malformed(line, "no prev_hash");

    // Step 4, then step 5: open a Session, or continue one.
    this.endsWithVerifiedClose = false;
    const stop = lineType.token === "open" ? this.openSession(value, line, seq, prev) : this.continueSession(line, seq, prev);
    if (stop !== undefined) return stop;
    const at: Position = { session_index: this.sessionIndex ?? 0, seq };

    // Step 6: by type.
    const signed = this.judge(value, lineType, at);
    if (signed !== undefined) return signed;

    // Step 7.
    this.tail = lineHash;
    this.expectedSeq = seq + 1;
    this.options.onLine?.({ line, offset: row.offset, at, lineType, value, lineHash, canonical });
    return undefined;
  }

  /** Step 6: what each type requires; nothing else is judged [M8.8]. */
  private judge(value: JsonObject, lineType: LineType, at: Position): Stop | undefined {
    if (lineType.code === "unknown") {
      // Whether a newer type must be signed is unknowable here, so an unsigned one only
      // caps; a signature that is present and fails is forgery, decidable without
      // understanding the Line. "Present" is read off the Line, not off the fault, so
      // deleting `key_id` cannot turn a forgery back into an unreadable Line.
      const fault = this.trySignature(value, at);
      if (fault !== undefined && !(fault.code === "unsigned" && !("signature" in value))) {
        return tampered({ code: "bad_signature", at, source: fault });
      }
      this.cap ??= { code: "unknown_line_type", at, line_type: lineType.token };
      return undefined;
    }
    switch (lineType.token) {
      case "open":
        return this.requireSignature(value, at);
      case "outcome": {
        const stop = this.requireSignature(value, at);
        const callId = value["call_id"];
        if (stop === undefined && typeof callId === "string") this.unfinished.outcome(callId);
        return stop;
      }
      case "decision": {
        const stop = this.requireSignature(value, at);
        if (stop !== undefined) return stop;
        const approvalId = value["approval_id"];
        if (typeof approvalId === "string") {
          if (this.seenApprovals.has(approvalId)) {
            return tampered({ code: "duplicate_decision", at, approval_id: approvalId });
          }
          this.seenApprovals.add(approvalId);
        }
        return undefined;
      }
      case "close": {
        const stop = this.requireSignature(value, at);
        if (stop === undefined) this.endsWithVerifiedClose = true;
        return stop;
      }
      case "intent": {
        // Never signed: the next signature covers it through prev_hash (SPEC §5.1).
        const callId = value["call_id"];
        // A copy: the parsed string is a slice of its row, and would keep the whole row alive.
        if (typeof callId === "string") {
          const kept = detachedString(callId);
          this.inFlight.push(kept);
          this.unfinished.intent(kept, at.session_index);
        }
        return undefined;
      }
      case "checkpoint": {
        // In the signed set: the cap must not excuse a forged checkpoint (SPEC §8.2).
        const stop = this.requireSignature(value, at);
        if (stop === undefined) this.cap ??= { code: "reserved_checkpoint", at };
        return stop;
      }
    }
  }

  /** Step 5, `open`: 5.1 to 5.7. */
  private openSession(value: JsonObject, line: number, seq: number, prev: PrevHash): Stop | undefined {
    const sessionIndex = this.sessionIndex === undefined ? 0 : this.sessionIndex + 1;
    // 5.1
    if (seq !== 0) {
      return tampered({ code: "seq_out_of_order", session_index: sessionIndex, expected: 0, found: seq });
    }
    // 5.2
    if (prev !== PrevHash.GENESIS) return malformed(line, "open line does not anchor on the genesis digest");
    const backText = value["prev_session_tail"];
    const back = typeof backText === "string" ? tryParseDigest("LineHash", backText) : undefined;
    const backReference = back?.ok === true ? back.digest : undefined;
    if (this.tail !== undefined) {
      // 5.3 [M7.1]: this one comparison is what makes truncating a non-final Session detectable.
      if (backReference === undefined || !chainsTo(PrevHash.after(backReference), this.tail)) {
        return tampered({
          code: "session_boundary_broken",
          session_index: sessionIndex,
          expected: this.tail,
          ...(backReference === undefined ? {} : { found: backReference }),
        });
      }
    }
    // 5.4
    const publicKey = value["public_key"];
    if (typeof publicKey !== "string" || checkHex(publicKey, 64) !== undefined) {
      return malformed(line, "open line carries no public key");
    }
    // 5.5
    const bytes = fromCheckedHex(publicKey);
    const keyId = KeyId.of(bytes);
    this.keyIds.add(keyId);
    // 5.6 [M8.4]: every `open` must be in a supplied trust slice, not merely one of them.
    if (this.trust !== undefined && !this.trust.has(publicKey)) {
      return tampered({ code: "untrusted_key", at: { session_index: sessionIndex, seq }, key_id: keyId });
    }
    // 5.7. The Session before has ended: its calls still waiting never finished (§13.4).
    if (this.sessionIndex !== undefined) this.unfinished.endSession(this.sessionIndex);
    this.sessionIndex = sessionIndex;
    this.sessions++;
    this.sessionKey = { keyId, key: verifyingKey(bytes) };
    this.inFlight = [];
    return undefined;
  }

  /** Step 5, any other type: continue the Session. */
  private continueSession(line: number, seq: number, prev: PrevHash): Stop | undefined {
    const sessionIndex = this.sessionIndex;
    // 5.1
    if (sessionIndex === undefined || this.tail === undefined) {
      return malformed(line, "chain does not begin with an open line");
    }
    // 5.2 [M8.2]. The hash link first: it is what a forger must break, and what tells a seq gap
    // (a write that did not land) apart from a removed line.
    if (!chainsTo(prev, this.tail)) {
      return tampered({ code: "chain_broken", at: { session_index: sessionIndex, seq }, expected: this.tail, found: prev });
    }
    // 5.3 [M8.3]
    if (seq > this.expectedSeq) {
      this.cap ??= { code: "missing_line", session_index: sessionIndex, expected: this.expectedSeq, found: seq };
    } else if (seq < this.expectedSeq) {
      return tampered({ code: "seq_out_of_order", session_index: sessionIndex, expected: this.expectedSeq, found: seq });
    }
    return undefined;
  }

  private requireSignature(value: JsonObject, at: Position): Stop | undefined {
    const fault = this.trySignature(value, at);
    return fault === undefined ? undefined : tampered({ code: "bad_signature", at, source: fault });
  }

  private trySignature(value: JsonObject, at: Position): SignatureFault | undefined {
    if (this.sessionKey === undefined) return { code: "unsigned" } as const;
    const claim = signatureClaim(value, this.sessionKey);
    if (claim.code !== "check") return claim;
    if (!this.checker.check(claim, this.signingInput, () => this.stopAt(at))) return { code: "bad_signature" };
    this.coverage = at;
    // Every intent before this signature is now covered through prev_hash.
    this.inFlight = [];
    return undefined;
  }

  private stopAt(at: Position): SignatureStop {
    return {
      at,
      rows: this.rows,
      sessions: this.sessions,
      keyIds: this.keyIds.size,
      coverage: this.coverage,
      head: this.tail,
      unfinished: this.unfinished.mark(),
    };
  }
}

function parsedPrev(text: string): PrevHash | undefined {
  // Stryker disable next-line StringLiteral: equivalent E9
  const parsed = tryParseDigest("PrevHash", text);
  return parsed.ok ? parsed.digest : undefined;
}

function malformed(line: number, detail: string): Stop {
  return tampered({ code: "malformed_line", line, detail });
}

function tampered(reason: TamperedReason): Stop {
  return { status: "tampered", reason };
}
