import { open as openFile, type FileHandle } from "node:fs/promises";
import { writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Appended, AppendedPayload, CallEnding, CallOpening, CallResult, CallStart, EndOptions } from "./calls.js";
import type { EnvelopeSink } from "../envelope-boundary.js";
import { CallLedger } from "./call-ledger.js";
import { CanonicalFormError } from "../wire/canonical.js";
import { PrevHash, RequestDigest, ResponseDigest, sameDigest, type LineHash } from "../wire/digest.js";
import { GroupCommit, type Urgency } from "../durable/group-commit.js";
import { acquireLock, type RecoveredLock } from "../durable/lock.js";
import { syncDirectory, syncFile } from "../durable/sync.js";
import { toHex } from "../wire/hex.js";
import type { SigningKey } from "../crypto/keys.js";
import { SCHEMA_VERSION, type DecisionPayload, type OutcomePayload, type PublicKeyHex } from "../wire/line-types.js";
import { MAX_ROW_BYTES } from "../wire/row-splitter.js";
import { sealLine } from "../crypto/signing.js";
import { lineAt, readFileTail } from "./tail.js";
import { PRIVATE_FILE_MODE } from "../durable/files.js";
import { RecordWriterError, lockedFault } from "./writer-error.js";

import type { AppendedLine, RecordWriterOptions } from "./writer-options.js";
import { io, lineTime, mismatch, put, systemClock, unfinished } from "./writer-steps.js";
import { RECORDED_REASON } from "./recorded-reasons.js";

export type { Appended, CallEnding, CallOpening, CallResult, CallStart, EndOptions } from "./calls.js";
export type { AppendedLine, RecordWriterOptions } from "./writer-options.js";

/**
 * Appends Lines to one record file (SPEC §4, §13.2). Opening starts a Session with a signed
 * `open`; `close()` ends it with a signed `close`, after writing an outcome for every call
 * still in flight.
 *
 * Each append is one synchronous step (the private `append`): `seq`, `prev_hash`, signature,
 * `line_hash` and the new tail are computed and committed together before the method
 * returns, so no two appends can read the same tail, and the chain cannot fork. Each
 * returned promise resolves only once its Line is on disk; appends made together share one
 * fsync (group commit, `durable/group-commit.ts`).
 *
 * A failed write stops the writer: every pending and later append is refused, because the
 * file may now end in a torn line. Reopening finds it and refuses until it is repaired.
 */
export class RecordWriter {
  private nextSeq = 0;
  private tail: LineHash = PrevHash.GENESIS as string as LineHash;
  /** Lines appended and not yet written. */
  private batch: string[] = [];
  private closed = false;
  private closing: Promise<Appended> | undefined;
  private readonly ledger = new CallLedger();
  private readonly commit: GroupCommit;

  private constructor(
    /** The record file this writer appends to, as given to {@link RecordWriter.open}. */
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly key: SigningKey,
    private readonly releaseLock: () => Promise<void>,
    private readonly envelope: EnvelopeSink | undefined,
    /** A stale lock this writer recovered on opening: its holder was gone (SPEC §13.3). */
    readonly recoveredLock: RecoveredLock | undefined,
    private readonly onLine: ((line: AppendedLine) => void) | undefined,
    private readonly clock: (() => Date) | undefined,
  ) {
    const fd = handle.fd;
    this.commit = new GroupCommit(
      {
        write: () => this.writeBatch(),
        sync: (inPlace) => syncFile(fd, inPlace),
        discard: () => void (this.batch = []),
      },
      (cause) => new RecordWriterError({ code: "failed", detail: cause.message }, { cause }),
    );
  }

  /**
   * Open (or create) `path` and start a Session. When the file already holds Lines, the
   * new `open` carries the last Line's hash as `prev_session_tail` (SPEC §7).
   *
   * @throws RecordWriterError `locked` when another writer holds the file, `torn_tail` when
   * its last line is torn (see {@link repairTornTail}), `tampered_tail` when it is one the
   * verifier calls Tampered, `insecure_dev_key`, `io`.
   */
  static async open(path: string, options: RecordWriterOptions): Promise<RecordWriter> {
    if (options.key.isInsecureDevKey && options.allowInsecureDevKey !== true) throw new RecordWriterError({ code: "insecure_dev_key" });
    const lock = await io(path, () => acquireLock(path));
    if (!lock.ok) throw new RecordWriterError(lockedFault(path, lock));
    let handle: FileHandle | undefined;
    try {
      // Owner-only whatever the umask; an existing record keeps its mode (SPEC §13.2).
      const opened = await io(path, () => openFile(path, "a+", PRIVATE_FILE_MODE));
      handle = opened;
      const size = (await io(path, () => opened.stat())).size;
      const tail = await io(path, () => readFileTail(opened, size));
      if (tail.code === "torn") throw new RecordWriterError({ code: "torn_tail", path, offset: tail.offset, detail: tail.detail });
      if (tail.code === "tampered") {
        const line = await io(path, () => lineAt(path, tail.offset));
        throw new RecordWriterError({ code: "tampered_tail", path, offset: tail.offset, line, detail: tail.detail });
      }
      if (tail.code === "too_long") throw new RecordWriterError({ code: "tail_too_long", path, offset: tail.offset });
      const writer = new RecordWriter(
        path,
        opened,
        options.key,
        lock.release,
        options.envelope,
        lock.recovered,
        options.onLine,
        options.clock === false ? undefined : (options.clock ?? systemClock),
      );
      // The file was created: its directory entry must survive a crash too.
      if (size === 0) await io(path, () => syncDirectory(dirname(path)));
      // A last line that parses but lost its newline lost nothing else: complete it.
      if (tail.code === "line" && !tail.endsWithNewline) writer.batch.push("\n");
      const publicKey = toHex(options.key.publicKey) as PublicKeyHex;
      await writer.append({
        line_type: "open",
        payload: {
          public_key: publicKey,
          ...(tail.code === "line" ? { prev_session_tail: tail.lineHash } : {}),
          ...(options.confinement === undefined ? {} : { confinement: options.confinement }),
        },
      });
      return writer;
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await lock.release();
      throw error;
    }
  }

  /** The hash of the last Line appended: the head a verifier can be handed later. */
  get head(): LineHash {
    return this.tail;
  }

  /** Calls whose intent is written and whose outcome is not. */
  get inFlight(): readonly string[] {
    return this.ledger.openIds();
  }

  // Lines given whole. A call's Lines go through the ledger as the call API's do.

  /**
   * Record that a call is about to run: its intent, given its digest. Resolves once the intent
   * is durable (SPEC §5.1). The call is then in flight as one begun with
   * {@link RecordWriter.beginCall}: an {@link RecordWriter.outcome} or
   * {@link RecordWriter.endCall} ends it, and `close()` records it abandoned if nothing does.
   *
   * @throws RecordWriterError `duplicate_call` when a call `call_id` is in flight.
   */
  intent(start: CallStart): Promise<Appended> {
    return this.beginCall(start);
  }

  /**
   * Record how a call ended, given its whole outcome. When a call `call_id` is in flight on
   * this writer, this ends it; otherwise the outcome stands alone, as for a call refused
   * before an intent was written.
   */
  outcome(payload: OutcomePayload): Promise<Appended> {
    return this.appendOutcome(payload, this.ledger.openCall(payload.call_id), "now");
  }

  /** Record a human verdict on a parked call (SPEC §5.3, `decision`). */
  decision(payload: DecisionPayload): Promise<Appended> {
    return this.append({ line_type: "decision", payload });
  }

  // Calls: an outcome on every exit path.

  /**
   * Start a call: write its intent and remember it, so that `close()` can record an
   * outcome for it if the caller never does. Given the request bytes, the writer hashes
   * them, and puts them in its Envelope (durably) before the intent names them.
   *
   * @throws RecordWriterError `duplicate_call`; `envelope` when the Envelope refuses the bytes
   * (no intent is written).
   */
  async beginCall(start: CallStart | CallOpening): Promise<Appended> {
    this.ledger.reserve(start.call_id);
    if (!("request" in start)) return this.startCall(start);
    return this.ledger.track(
      this.keepRequest(start).then(
        (call) => this.startCall(call),
        (error: unknown) => {
          this.ledger.release(start.call_id);
          throw error;
        },
      ),
    );
  }

  /**
   * Record a call that did not run (refused before it could): its intent and its outcome,
   * appended one after the other, so that they are made durable together. Resolves with
   * the outcome once both are durable.
   *
   * @throws RecordWriterError `duplicate_call`; `envelope` when the Envelope refuses the request
   * bytes (nothing is written).
   */
  async recordUnrun(start: CallStart | CallOpening, result: CallResult): Promise<Appended> {
    this.ledger.reserve(start.call_id);
    const work = (async () => {
      let call: CallStart;
      try {
        call = "request" in start ? await this.keepRequest(start) : start;
      } catch (error) {
        this.ledger.release(start.call_id);
        throw error;
      }
      // Both appends happen before the first await: one batch, one fsync.
      const [, appended] = await Promise.all([this.startCall(call), this.recordOutcome(call, result, "now")]);
      return appended;
    })();
    return this.ledger.track(work);
  }

  /**
   * Finish a call begun with {@link RecordWriter.beginCall}. Given the response bytes, the writer puts
   * them in its Envelope before the outcome names their digest. If the Envelope refuses
   * them the outcome is still written (a call always gets one) and the promise rejects
   * with `envelope`: the record then names a response the Envelope lacks, which
   * `aegis envelope verify` reports.
   *
   * @throws RecordWriterError `unknown_call` when no call `callId` is in flight on this writer;
   * `envelope` as above.
   */
  endCall(callId: string, result: CallResult | CallEnding, options: EndOptions = {}): Promise<Appended> {
    const start = this.ledger.openCall(callId);
    if (start === undefined) return Promise.reject(new RecordWriterError({ code: "unknown_call", callId }));
    const urgency = options.sync ?? "now";
    if (!("response" in result)) return this.recordOutcome(start, result, urgency);
    this.ledger.ending(start);
    return this.ledger.track(this.endWithResponse(start, result, urgency));
  }

  /**
   * Run `body` as one call: the intent is durable before `body` starts, and an outcome is
   * written however it ends: its result when it returns, a trap when it throws.
   */
  async call<T>(start: CallStart | CallOpening, body: () => Promise<{ readonly value: T; readonly outcome: CallResult | CallEnding }>): Promise<T> {
    await this.beginCall(start);
    let finished: Awaited<ReturnType<typeof body>>;
    try {
      finished = await body();
    } catch (error) {
      await this.endCall(start.call_id, unfinished({ status: "trap", message: RECORDED_REASON.hostPanic }));
      throw error;
    }
    await this.endCall(start.call_id, finished.outcome);
    return finished.value;
  }

  /**
   * End the Session: an outcome ("session abandoned") for every call still in flight, then
   * a signed `close`, then release the file. Idempotent.
   */
  close(): Promise<Appended> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private async finish(): Promise<Appended> {
    try {
      // Calls waiting on the Envelope go in before the close: intents whose request is being
      // put (then abandoned below), outcomes whose response is. With none under way, nothing
      // is awaited: the calls open now are abandoned before anything else can run.
      while (this.ledger.busy) await this.ledger.settle();
      const abandoned = this.ledger
        .openIds()
        .map((callId) => this.endCall(callId, unfinished({ status: "host_denied", reason: RECORDED_REASON.sessionAbandoned })));
      const close = this.append({ line_type: "close", payload: {} });
      this.closed = true;
      // Wait for all of them: a rejection left unobserved would end the process.
      const settled = await Promise.allSettled([...abandoned, close]);
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed !== undefined) throw failed.reason;
      return await close;
    } finally {
      await this.handle.close().catch(() => undefined);
      await this.releaseLock();
    }
  }

  private async startCall(call: CallStart): Promise<Appended> {
    const { policy_set_hash: _unused, ...intent } = call;
    void _unused;
    const appended = this.append({ line_type: "intent", payload: intent });
    this.ledger.open(call);
    try {
      return await appended;
    } catch (error) {
      this.ledger.release(call.call_id, call);
      throw error;
    }
  }

  private async endWithResponse(start: CallStart, ending: CallEnding, urgency: Urgency): Promise<Appended> {
    const { response, ...rest } = ending;
    const digest = ResponseDigest.of(response);
    let refused: RecordWriterError | undefined;
    try {
      const kept = this.envelope === undefined ? undefined : await put("response", () => this.envelope?.putResponse(response));
      if (kept !== undefined && !sameDigest(kept, digest)) refused = mismatch("response", kept, digest);
    } catch (error) {
      if (!(error instanceof RecordWriterError)) throw error;
      refused = error;
    }
    try {
      const appended = await this.recordOutcome(start, { ...rest, response_digest: digest }, urgency);
      if (refused !== undefined) throw refused;
      return appended;
    } finally {
      this.ledger.release(start.call_id, start);
    }
  }

  private recordOutcome(start: CallStart, result: CallResult, urgency: Urgency): Promise<Appended> {
    const payload: OutcomePayload = {
      ...result,
      call_id: start.call_id,
      tool_id: start.tool_id,
      request_digest: start.request_digest,
      policy_set_hash: start.policy_set_hash,
      // SPEC §14.11: the outcome names the read its intent named, on every exit path.
      ...(start.envelope_access === undefined ? {} : { envelope_access: start.envelope_access }),
    };
    return this.appendOutcome(payload, start, urgency);
  }

  /** Append an outcome; it ends `start`, the call in flight it answers, when there is one. */
  private appendOutcome(payload: OutcomePayload, start: CallStart | undefined, urgency: Urgency): Promise<Appended> {
    const appended = this.append({ line_type: "outcome", payload }, urgency);
    if (start === undefined) return appended;
    this.ledger.release(start.call_id, start);
    // A refused outcome (outside the value space, too long) leaves the call open, for close()
    // to record as abandoned, unless its id was taken again meanwhile.
    appended.catch((error: unknown) => {
      if (error instanceof RecordWriterError && (error.fault.code === "not_canonical" || error.fault.code === "line_too_long")) this.ledger.reopen(start);
    });
    return appended;
  }

  private async keepRequest(opening: CallOpening): Promise<CallStart> {
    const { request, ...rest } = opening;
    const digest = RequestDigest.of(request);
    const kept = this.envelope === undefined ? undefined : await put("request", () => this.envelope?.putRequest(request));
    if (kept !== undefined && !sameDigest(kept, digest)) throw mismatch("request", kept, digest);
    return { ...rest, request_digest: digest };
  }

  // The append: the part that must not be interrupted.

  /**
   * Everything from `seq` to the new tail, with no await inside. The Line's kind decides
   * whether it is signed: an intent never is (SPEC §5.1), every other kind always.
   */
  private append(given: AppendedPayload, urgency: Urgency = "now"): Promise<Appended> {
    const failure = this.commit.failure;
    if (failure !== undefined) return Promise.reject(failure);
    if (this.closed) return Promise.reject(new RecordWriterError({ code: "closed" }));
    const seq = this.nextSeq;
    const prev = given.line_type === "open" ? PrevHash.GENESIS : PrevHash.after(this.tail);
    const key = given.line_type === "intent" ? undefined : this.key;
    let sealed;
    try {
      const line = { ...given.payload, schema_version: SCHEMA_VERSION, line_type: given.line_type, seq, prev_hash: prev };
      sealed = sealLine(this.clock === undefined ? line : { ...line, time: lineTime(this.clock()) }, key);
    } catch (error) {
      if (error instanceof CanonicalFormError) return Promise.reject(new RecordWriterError({ code: "not_canonical", fault: error.fault }));
      return Promise.reject(error);
    }
    const { text, lineHash } = sealed;
    // A UTF-8 byte is at most 3 per UTF-16 unit: most Lines need no exact count.
    if (text.length * 3 > MAX_ROW_BYTES) {
      const bytes = Buffer.byteLength(text, "utf8");
      if (bytes > MAX_ROW_BYTES) return Promise.reject(new RecordWriterError({ code: "line_too_long", bytes, limit: MAX_ROW_BYTES }));
    }
    this.nextSeq = seq + 1;
    this.tail = lineHash;
    this.batch.push(`${text}\n`);
    const durable = this.commit.durable<Appended>({ seq, lineHash }, urgency);
    this.onLine?.({
      text,
      seq,
      lineHash,
      durable: durable.then(
        () => true,
        () => false,
      ),
    });
    return durable;
  }

  /** One `write` for every Line appended since the last (an append to the page cache). */
  private writeBatch(): void {
    if (this.batch.length === 0) return;
    const data = Buffer.from(this.batch.join(""), "utf8");
    this.batch = [];
    let written = 0;
    while (written < data.length) written += writeSync(this.handle.fd, data, written, data.length - written);
  }
}
