import { open as openFile, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { fsync, fsyncSync, writeSync } from "node:fs";
import { CanonicalFormError } from "./canonical.js";
import { PrevHash, RequestDigest, ResponseDigest, sameDigest, type LineHash as LineHashT, type PolicySetHash } from "./digest.js";
import { sealLine, type SealedLine } from "./signing.js";
import type { SigningKey } from "./keys.js";
import {
  SCHEMA_VERSION,
  type DecisionPayload,
  type DecisionAxes,
  type ExecutionOutcome,
  type IntentPayload,
  type OutcomePayload,
  type PublicKeyHex,
  type SignedPayload,
} from "./lines.js";
import { acquireLock } from "./lock.js";
import { MAX_ROW_BYTES } from "./rows.js";
import { syncDirectory } from "./files.js";
import { readFileTail } from "./tail.js";
import { describeIoError } from "./text.js";
import { ChainWriterError, lockedFault, type WriterFault } from "./writer-error.js";
import { toHex } from "./hex.js";

export interface ChainWriterOptions {
  readonly key: SigningKey;
  /**
   * Permit the published development key. Only for reproducing vectors: a record signed
   * with it proves nothing about who wrote it.
   */
  readonly allowInsecureDevKey?: boolean;
  /**
   * Where the verbatim request and response bytes of calls begun with bytes are kept
   * (SPEC §9): each is put, durably, before the Line that names its digest is written.
   */
  readonly envelope?: EnvelopeSink;
}

/** What the writer needs of an Envelope: a store that hashes what it is given (SPEC §9). */
export interface EnvelopeSink {
  putRequest(bytes: Uint8Array): Promise<RequestDigest>;
  putResponse(bytes: Uint8Array): Promise<ResponseDigest>;
}

/** Where an appended Line landed. */
export interface Appended {
  readonly seq: number;
  readonly lineHash: LineHashT;
}

/** What a call needs at its start so that an outcome can be written on every exit path. */
export interface CallStart extends IntentPayload {
  readonly policy_set_hash: PolicySetHash;
}

/** A call's start given the verbatim request bytes: the writer hashes them (and keeps them, with an Envelope). */
export type CallOpening = Omit<CallStart, "request_digest"> & { readonly request: Uint8Array };

/** How a call begun with {@link ChainWriter.beginCall} ended: the outcome without what its start gave. */
export type CallResult = Omit<OutcomePayload, "call_id" | "tool_id" | "request_digest" | "policy_set_hash">;

/** A call's end given the verbatim response bytes in place of their digest. */
export type CallEnding = Omit<CallResult, "response_digest"> & { readonly response: Uint8Array };

/** How an outcome is made durable (SPEC §13.2). */
export interface EndOptions {
  /**
   * `now` (the default): fsynced at the end of this tick, as every Line. `soon`: written with
   * the next Line that must be durable now (sharing its fsync), or on its own within 2 ms,
   * off the event loop. For an outcome no one waits on, such as a relayed call's, whose
   * answer has already gone to its caller.
   */
  readonly sync?: "now" | "soon";
}

type Waiter = { readonly appended: Appended; readonly resolve: (appended: Appended) => void; readonly reject: (error: Error) => void };

/**
 * Appends Lines to one record file (SPEC §4, §13.2). Opening starts a Session with a signed
 * `open`; `close()` ends it with a signed `close`, after writing an outcome for every call
 * still in flight.
 *
 * Each append is one synchronous step: `seq`, `prev_hash`, signature, `line_hash` and the
 * new tail are computed and committed together before the method returns, so no two
 * appends can read the same tail, and the chain cannot fork. Each returned promise
 * resolves only once its Line is on disk (fsync). Appends made while an fsync runs are
 * written and synced together by the next one (group commit).
 *
 * A failed write stops the writer: every pending and later append is refused, because the
 * file may now end in a torn line. Reopening finds it and refuses until it is repaired.
 */
export class ChainWriter {
  private nextSeq = 0;
  private tail: LineHashT;
  private batch: string[] = [];
  private waiters: Waiter[] = [];
  private failure: ChainWriterError | undefined;
  private closing: Promise<Appended> | undefined;
  private readonly calls = new Map<string, CallStart>();

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly key: SigningKey,
    private readonly releaseLock: () => Promise<void>,
    private readonly envelope: EnvelopeSink | undefined,
  ) {
    this.tail = PrevHash.GENESIS as string as LineHashT;
  }

  /**
   * Open (or create) `path` and start a Session. When the file already holds Lines, the
   * new `open` carries the last Line's hash as `prev_session_tail` (SPEC §7).
   *
   * @throws ChainWriterError `locked` when another writer holds the file, `torn_tail` when
   * its last line is torn (see {@link repairTornTail}), `insecure_dev_key`, `io`.
   */
  static async open(path: string, options: ChainWriterOptions): Promise<ChainWriter> {
    if (options.key.isInsecureDevKey && options.allowInsecureDevKey !== true) {
      throw new ChainWriterError({ code: "insecure_dev_key" });
    }
    const lock = await io(path, () => acquireLock(path));
    if (!lock.ok) throw new ChainWriterError(lockedFault(path, lock));
    let handle: FileHandle | undefined;
    try {
      const opened = await io(path, () => openFile(path, "a+", 0o644));
      handle = opened;
      const size = (await io(path, () => opened.stat())).size;
      const tail = await io(path, () => readFileTail(opened, size));
      if (tail.kind === "torn") throw new ChainWriterError({ code: "torn_tail", path, offset: tail.offset, detail: tail.detail });
      if (tail.kind === "too_long") throw new ChainWriterError({ code: "tail_too_long", path, offset: tail.offset });
      const writer = new ChainWriter(path, opened, options.key, lock.release, options.envelope);
      if (size === 0) await io(path, () => syncDirectory(dirname(path)));
      // A last line that parses but lost its newline lost nothing else: complete it.
      if (tail.kind === "line" && !tail.endsWithNewline) writer.batch.push("\n");
      const open: SignedPayload = {
        line_type: "open",
        payload: {
          public_key: toHex(options.key.publicKey) as PublicKeyHex,
          ...(tail.kind === "line" ? { prev_session_tail: tail.lineHash } : {}),
        },
      };
      await writer.appendSigned(open);
      return writer;
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await lock.release();
      throw error;
    }
  }

  /** The hash of the last Line appended: the head a verifier can be handed later. */
  get head(): LineHashT {
    return this.tail;
  }

  /** Calls whose intent is written and whose outcome is not. */
  get inFlight(): readonly string[] {
    return [...this.calls.keys()];
  }

  /** Record that a call is about to run. Resolves once the intent is durable (SPEC §5.1). */
  intent(payload: IntentPayload): Promise<Appended> {
    return this.append("intent", payload, false);
  }

  /** Record how a call ended. */
  outcome(payload: OutcomePayload): Promise<Appended> {
    return this.appendSigned({ line_type: "outcome", payload });
  }

  /** Record a human verdict on a parked call (SPEC §5.3, `decision`). */
  decision(payload: DecisionPayload): Promise<Appended> {
    return this.appendSigned({ line_type: "decision", payload });
  }

  /**
   * Start a call: write its intent and remember it, so that `close()` can record an
   * outcome for it if the caller never does. Given the request bytes, the writer hashes
   * them, and puts them in its Envelope (durably) before the intent names them.
   *
   * @throws ChainWriterError `envelope` when the Envelope refuses the bytes: no intent is written.
   */
  async beginCall(start: CallStart | CallOpening): Promise<Appended> {
    if (this.busy(start.call_id)) throw new ChainWriterError({ code: "duplicate_call", callId: start.call_id });
    if (!("request" in start)) return this.startCall(start);
    // The id is taken while the bytes are put, and close() waits for the put.
    this.starting.add(start.call_id);
    const begun = this.keepRequest(start).then(
      (call) => {
        this.starting.delete(start.call_id);
        return this.startCall(call);
      },
      (error: unknown) => {
        this.starting.delete(start.call_id);
        throw error;
      },
    );
    return this.track(begun);
  }

  /**
   * Record a call that did not run (refused before it could): its intent and its outcome,
   * appended one after the other, so that they are made durable together. Resolves with
   * the outcome once both are durable.
   *
   * @throws ChainWriterError `duplicate_call` when the id is in flight; `envelope` when the
   * Envelope refuses the request bytes (nothing is written).
   */
  async recordUnrun(start: CallStart | CallOpening, result: CallResult): Promise<Appended> {
    if (this.busy(start.call_id)) throw new ChainWriterError({ code: "duplicate_call", callId: start.call_id });
    this.starting.add(start.call_id);
    const work = (async () => {
      let call: CallStart;
      try {
        call = "request" in start ? await this.keepRequest(start) : start;
      } finally {
        this.starting.delete(start.call_id);
      }
      // Both appends happen before the first await: one batch, one fsync.
      const intent = this.startCall(call);
      const outcome = this.recordOutcome(call, result);
      const [, appended] = await Promise.all([intent, outcome]);
      return appended;
    })();
    return this.track(work);
  }

  /** A call id is taken from its intent until its outcome is appended, put included. */
  private busy(callId: string): boolean {
    return this.calls.has(callId) || this.starting.has(callId) || this.ending.has(callId);
  }

  private async startCall(call: CallStart): Promise<Appended> {
    const { policy_set_hash: _unused, ...intent } = call;
    void _unused;
    const appended = this.append("intent", intent, false);
    this.calls.set(call.call_id, call);
    try {
      return await appended;
    } catch (error) {
      if (this.calls.get(call.call_id) === call) this.calls.delete(call.call_id);
      throw error;
    }
  }

  /** Keep `work` in the set close() drains before it writes abandoned outcomes and the close. */
  private track(work: Promise<Appended>): Promise<Appended> {
    this.pending.add(work);
    const forget = (): void => void this.pending.delete(work);
    work.then(forget, forget);
    return work;
  }

  private async keepRequest(opening: CallOpening): Promise<CallStart> {
    const { request, ...rest } = opening;
    const digest = RequestDigest.of(request);
    if (this.envelope !== undefined) {
      const kept = await this.put("request", () => this.envelope?.putRequest(request));
      if (kept !== undefined && !sameDigest(kept, digest)) {
        throw new ChainWriterError({ code: "envelope", part: "request", detail: `the Envelope answered ${kept} for bytes that hash to ${digest}` });
      }
    }
    return { ...rest, request_digest: digest };
  }

  private async put<D>(part: "request" | "response", put: () => Promise<D> | undefined): Promise<D | undefined> {
    try {
      return await put();
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new ChainWriterError({ code: "envelope", part, detail }, { cause: error });
    }
  }

  /**
   * Finish a call begun with {@link beginCall}. Given the response bytes, the writer puts
   * them in its Envelope before the outcome names their digest. If the Envelope refuses
   * them the outcome is still written (a call always gets one) and the promise rejects
   * with `envelope`: the record then names a response the Envelope lacks, which
   * `aegis envelope verify` reports.
   */
  endCall(callId: string, result: CallResult | CallEnding, options: EndOptions = {}): Promise<Appended> {
    const start = this.calls.get(callId);
    if (start === undefined) return Promise.reject(new ChainWriterError({ code: "unknown_call", callId }));
    const sync = options.sync ?? "now";
    if (!("response" in result)) return this.recordOutcome(start, result, sync);
    // Out of `calls` now, so close() does not also abandon it; close() waits for it instead,
    // and the id stays taken until its outcome is appended.
    this.calls.delete(callId);
    this.ending.add(callId);
    const ending = this.endWithResponse(start, result, sync);
    const release = (): void => void this.ending.delete(callId);
    ending.then(release, release);
    return this.track(ending);
  }

  private async endWithResponse(start: CallStart, ending: CallEnding, sync: "now" | "soon"): Promise<Appended> {
    const { response, ...rest } = ending;
    const digest = ResponseDigest.of(response);
    let refused: ChainWriterError | undefined;
    if (this.envelope !== undefined) {
      try {
        const kept = await this.put("response", () => this.envelope?.putResponse(response));
        if (kept !== undefined && !sameDigest(kept, digest)) {
          refused = new ChainWriterError({ code: "envelope", part: "response", detail: `the Envelope answered ${kept} for bytes that hash to ${digest}` });
        }
      } catch (error) {
        if (!(error instanceof ChainWriterError)) throw error;
        refused = error;
      }
    }
    const appended = await this.recordOutcome(start, { ...rest, response_digest: digest }, sync);
    if (refused !== undefined) throw refused;
    return appended;
  }

  private recordOutcome(start: CallStart, result: CallResult, sync: "now" | "soon" = "now"): Promise<Appended> {
    const callId = start.call_id;
    const payload: OutcomePayload = {
      ...result,
      call_id: start.call_id,
      tool_id: start.tool_id,
      request_digest: start.request_digest,
      policy_set_hash: start.policy_set_hash,
    };
    const appended = this.append("outcome", payload, true, sync);
    // Still in flight until an outcome is taken: a refused one (outside the value space,
    // too long) leaves the call for close() to record as abandoned. Only this call's entry
    // is touched: the id may have been taken again since.
    if (this.calls.get(callId) === start) this.calls.delete(callId);
    appended.catch((error: unknown) => {
      if (error instanceof ChainWriterError && (error.fault.code === "not_canonical" || error.fault.code === "line_too_long") && !this.busy(callId)) {
        this.calls.set(callId, start);
      }
    });
    return appended;
  }

  /** Puts in progress: requests of calls starting, responses of calls ending. */
  private readonly pending = new Set<Promise<Appended>>();
  private readonly starting = new Set<string>();
  private readonly ending = new Set<string>();

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
      await this.endCall(start.call_id, unfinished({ status: "trap", message: "host panic during tool call" }));
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
      // put (then abandoned below), outcomes whose response is. Drained until none is left,
      // because one may begin while another is awaited.
      while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
      const abandoned = [...this.calls.keys()].map((callId) => this.endCall(callId, unfinished({ status: "host_denied", reason: "session abandoned" })));
      const close = this.appendSigned({ line_type: "close", payload: {} });
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

  private closed = false;

  private appendSigned(line: SignedPayload): Promise<Appended> {
    return this.append(line.line_type, line.payload, true);
  }

  /** The critical section: everything from `seq` to the new tail, with no await inside. */
  private append(lineType: string, payload: object, signed: boolean, sync: "now" | "soon" = "now"): Promise<Appended> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new ChainWriterError({ code: "closed" }));
    const seq = this.nextSeq;
    const prev = lineType === "open" ? PrevHash.GENESIS : PrevHash.after(this.tail);
    const line = { ...payload, schema_version: SCHEMA_VERSION, line_type: lineType, seq, prev_hash: prev };
    let sealed: SealedLine;
    try {
      sealed = sealLine(line, signed ? this.key : undefined);
    } catch (error) {
      if (error instanceof CanonicalFormError) {
        return Promise.reject(new ChainWriterError({ code: "not_canonical", fault: error.fault }));
      }
      return Promise.reject(error);
    }
    const { text, lineHash } = sealed;
    // A UTF-8 byte is at most 3 per UTF-16 unit: most Lines need no exact count.
    if (text.length * 3 > MAX_ROW_BYTES) {
      const bytes = Buffer.byteLength(text, "utf8");
      if (bytes > MAX_ROW_BYTES) return Promise.reject(new ChainWriterError({ code: "line_too_long", bytes, limit: MAX_ROW_BYTES }));
    }
    this.nextSeq = seq + 1;
    this.tail = lineHash;
    this.batch.push(`${text}\n`);
    if (sync === "now") this.urgent++;
    const appended: Appended = { seq, lineHash };
    const durable = new Promise<Appended>((resolve, reject) => this.waiters.push({ appended, resolve, reject }));
    if (this.batch.length >= EAGER_BATCH && this.syncing < MAX_SYNCS_IN_FLIGHT) {
      // Many appends in one burst: start syncing these now, on the other core, while
      // this thread signs the rest of the burst.
      this.flush();
    } else if (sync === "soon") {
      // Written with the next Line that must be durable now, or after SOON_MS on its own,
      // off the event loop: nobody is waiting on it, so it need not cost an fsync of its own.
      this.deferred ??= setTimeout(() => {
        this.deferred = undefined;
        this.flush(true);
      }, SOON_MS);
    } else if (!this.scheduled) {
      this.scheduled = true;
      // At the end of this tick, so that appends made together are written together.
      process.nextTick(() => this.flush());
    }
    return durable;
  }

  /**
   * Write the pending Lines with one `write` and make them durable with one `fsync`. The
   * write is synchronous (an append to the page cache costs microseconds); the fsync of a
   * batch runs off the event loop (see {@link syncNow} for the one exception), and a second
   * batch may be written and synced while the first one's fsync is still running. A
   * batch's promises resolve only when an fsync issued after its write completes, and
   * after every earlier batch has resolved.
   */
  private flush(offThread = false): void {
    this.scheduled = false;
    if (this.deferred !== undefined) {
      clearTimeout(this.deferred);
      this.deferred = undefined;
    }
    if (this.batch.length === 0 || this.failure !== undefined || this.syncing >= MAX_SYNCS_IN_FLIGHT) return;
    // Lines someone waits on now; Lines appended "soon" ride along.
    const urgent = this.urgent;
    this.urgent = 0;
    const data = Buffer.from(this.batch.join(""), "utf8");
    const waiters = this.waiters;
    this.batch = [];
    this.waiters = [];
    try {
      let written = 0;
      while (written < data.length) written += writeSync(this.handle.fd, data, written, data.length - written);
    } catch (error) {
      this.fail(error, waiters);
      return;
    }
    this.syncing++;
    const previous = this.lastSynced;
    const synced = urgent === 1 && this.syncing === 1 && !offThread ? syncNow(this.handle.fd) : syncOffThread(this.handle.fd);
    this.lastSynced = Promise.all([previous, synced]).then(
      () => {
        this.syncing--;
        if (this.failure !== undefined) for (const w of waiters) w.reject(this.failure);
        else for (const w of waiters) w.resolve(w.appended);
        this.flush();
      },
      (error: unknown) => {
        this.syncing--;
        this.fail(error, waiters);
      },
    );
  }

  private syncing = 0;
  private scheduled = false;
  /** Lines in `batch` appended to be durable now (not "soon"). */
  private urgent = 0;
  /** The timer that makes Lines appended "soon" durable when no other Line comes first. */
  private deferred: NodeJS.Timeout | undefined;
  private lastSynced: Promise<unknown> = Promise.resolve();

  private fail(error: unknown, waiters: readonly Waiter[]): void {
    this.failure ??= new ChainWriterError({ code: "failed", detail: error instanceof Error ? error.message : String(error) }, { cause: error });
    for (const w of [...waiters, ...this.waiters]) w.reject(this.failure);
    this.waiters = [];
    this.batch = [];
    this.urgent = 0;
  }
}

/**
 * A lone Line with nothing else in flight is a caller waiting on it alone: sync it here,
 * which saves a thread hop (~30-50 µs measured) and blocks nothing that could have run.
 * Larger batches sync off the event loop, so signing the next Lines overlaps the disk.
 */
function syncNow(fd: number): Promise<void> {
  try {
    fsyncSync(fd);
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function syncOffThread(fd: number): Promise<void> {
  return new Promise<void>((resolve, reject) => fsync(fd, (error) => (error === null ? resolve() : reject(error))));
}

/** How long a Line appended "soon" may wait for a Line to share its fsync with. */
const SOON_MS = 2;
/** Two fsyncs in flight let the next batch be written while the previous one syncs. */
const MAX_SYNCS_IN_FLIGHT = 2;
/** A burst of this many appends is written and synced without waiting for the tick's end. */
const EAGER_BATCH = 16;

function unfinished(execution: ExecutionOutcome): CallResult {
  const axes: DecisionAxes = {};
  return {
    policy: { status: "denied", reason: "not evaluated" },
    capability: { status: "denied", reason: "not evaluated" },
    execution,
    decision_axes: axes,
  };
}

async function io<T>(path: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof ChainWriterError) throw error;
    const fault: WriterFault = { code: "io", path, detail: describeIoError(error) };
    throw new ChainWriterError(fault, { cause: error });
  }
}
