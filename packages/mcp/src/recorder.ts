import { RecordWriterError, RequestDigest, type Appended, type CallResult, type PolicySetHash } from "@aegis/format";
import { messageOf, unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { classifyClient, classifyServer, elementsOf, rootsOf, type ClientElement, type Json } from "./message.js";
import type { DroppedWhy, Notice } from "./notice.js";
import {
  DROPPED_ANSWER_TOOL,
  PASSTHROUGH_POLICY_SET_HASH,
  UNKNOWN_TOOL,
  UNREADABLE_FRAME_TOOL,
  answered,
  droppedAnswer,
  malformed,
  policySetHashOf,
  unanswered,
  unreadableFrame,
  type Governance,
  type Unanswered,
} from "./outcomes.js";
import { recordParkAnswer, type ParkAnswer, type ParkRefusal } from "./parks.js";
import { ToolSpecs } from "./pins.js";
import { Rounds } from "./rounds.js";
import { failedVerdict, type FrameVerdict } from "./frame-verdict.js";
import { planFrame, type Planned } from "./plan.js";
import { refusalFrame, type RefusalStyle } from "./refusal.js";
import { readFrame, type FrameReading } from "./strict-frame.js";
import { CallIds, type PendingCall, type RecorderOptions } from "./recorder-options.js";
import { isCallElement, looksLikeMessage, refuseBatch, refuseFrame, refuseUnreadable, type RefusalContext } from "./recorded-refusals.js";

export { CallIds, type RecorderOptions } from "./recorder-options.js";

/**
 * The recording and enforcing half of the relay (SPEC §17), shared by `aegis wrap` and the
 * in-process transport: it is told every frame each way, in order, and answers what to do
 * with each client frame. It never re-encodes a frame it relays.
 */
export class McpRecorder {
  private readonly calls = new Map<string, PendingCall>();
  /** `tools/list` requests in flight, by id key: whether each asked for a later page. */
  private readonly listings = new Map<string, boolean>();
  /** The client's other requests in flight, by id key: a call may not reuse one. */
  private readonly requests = new Set<string>();
  /** The server's `roots/list` requests in flight, by the server's id key. */
  private readonly rootsRequests = new Set<string>();
  private readonly specs = new ToolSpecs();
  private readonly rounds = new Rounds();
  /** Intents being made durable, and outcomes being written: finish() waits for both. */
  private readonly work = new Set<Promise<unknown>>();
  private failure: Error | undefined;
  private finished = false;
  private readonly clock: () => number;
  private readonly style: RefusalStyle;
  private readonly callIds: CallIds;

  /** What a refused frame is recorded with (recorded-refusals.ts). */
  private readonly refusals: RefusalContext;

  constructor(private readonly options: RecorderOptions) {
    this.clock = options.clock ?? (() => performance.now());
    this.style = options.refusal ?? "tool-result";
    this.callIds = options.callIds ?? new CallIds();
    this.refusals = {
      unrun: (...args) => this.unrun(...args),
      notify: (notice) => this.notify(notice),
      continuation: (element) => this.continuation(element),
      style: this.style,
      control: options.control,
    };
  }

  /** The first failure to write the record, if any: after it, no call may run. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** Calls relayed and not yet answered. */
  get inFlight(): number {
    return this.calls.size;
  }

  /**
   * Take a client frame. Every call it carries is decided and its intent appended now, in
   * frame order; the promise resolves once those intents are durable, with what to do with
   * the frame. A frame whose calls cannot be recorded never reaches the server, and neither
   * does one that is not a message (SPEC §17.1): what wrap cannot read strictly, it refuses
   * and records. `read`: the frame's strict reading, when the caller has already read it.
   */
  admit(frame: Buffer, read?: FrameReading): Promise<FrameVerdict> {
    let reading: FrameReading | undefined = read;
    try {
      reading ??= readFrame(frame);
      return this.admitRead(frame, reading);
    } catch (error) {
      // A bug of ours must not let a frame through, nor end the relay: nothing runs unrecorded.
      return Promise.resolve(failedVerdict(reading?.ok === true ? reading.value : undefined, this.fail(error), this.style));
    }
  }

  /**
   * A client frame longer than the relay's bound (SPEC §17.1): not read, so not relayed; it
   * is recorded by the digest of its bytes, which were hashed as they went by and not kept.
   */
  refuseOversize(bytes: number, digest: RequestDigest, limit: number): Promise<FrameVerdict> {
    this.notify({ code: "oversize_frame", from: "client", bytes, limit });
    const answer = refusalFrame(
      [{ id: null, code: "FRAME_TOO_LARGE", detail: { reason: `the frame was ${bytes} bytes, over the relay's ${limit}-byte bound` }, call: false }],
      false,
      this.style,
    );
    if (this.failure !== undefined) return Promise.resolve(failedVerdict(undefined, this.failure, this.style));
    const written = this.options.writer.recordUnrun(
      { call_id: this.mintCallId(), tool_id: UNREADABLE_FRAME_TOOL, policy_set_hash: PASSTHROUGH_POLICY_SET_HASH, request_digest: digest },
      unreadableFrame("too_large"),
    );
    return this.tracked(written).then(
      (): FrameVerdict => ({ code: "answer", frame: answer }),
      (error: unknown) => failedVerdict(undefined, this.fail(error), this.style),
    );
  }

  private admitRead(frame: Buffer, reading: FrameReading): Promise<FrameVerdict> {
    if (this.failure !== undefined) return Promise.resolve(failedVerdict(reading.ok ? reading.value : undefined, this.failure, this.style));
    if (!reading.ok) return this.settle(refuseUnreadable(this.refusals, frame, reading.unreadable), undefined);
    const parsed = reading.value;
    const elements = elementsOf(parsed).map(classifyClient);
    // MCP has had no batches since 2025-06-18, and a matcher judging an array misses every
    // call in it: a batch holding a call is refused whole, deciding none (SPEC §17.3).
    if (Array.isArray(parsed) && elements.some(isCallElement)) return this.settle(refuseBatch(this.refusals, elements, frame), parsed);
    const gate = this.options.gate;
    const plans = planFrame(elements, frame, {
      inFlight: (key) => this.calls.has(key) || this.listings.has(key) || this.requests.has(key),
      isCall: (key) => this.calls.has(key),
      ...(gate === undefined ? {} : { gate }),
      notify: (notice) => this.notify(notice),
    });
    // Under a Policy Set, a call naming no tool the set could judge does not run (fail closed).
    const refusing = plans.some((p) => p.code === "refuse" || p.code === "duplicate" || (p.code === "malformed" && gate !== undefined));
    return this.settle(refusing ? refuseFrame(this.refusals, plans, frame, Array.isArray(parsed)) : this.forwardFrame(plans, elements, frame), parsed);
  }

  private settle(ready: Promise<FrameVerdict>, parsed: Json | undefined): Promise<FrameVerdict> {
    return this.tracked(ready).catch((error: unknown) => failedVerdict(parsed, this.fail(error), this.style));
  }

  /** Record every call the frame carries, then let it through. */
  private async forwardFrame(plans: readonly Planned[], elements: readonly ClientElement[], frame: Buffer): Promise<FrameVerdict> {
    const writes: Promise<unknown>[] = [];
    const started: PendingCall[] = [];
    for (const plan of plans) {
      if (plan.code === "malformed") {
        writes.push(this.unrun(UNKNOWN_TOOL, PASSTHROUGH_POLICY_SET_HASH, frame, malformed("no_name")));
      } else if (plan.code === "allow" && plan.element.code === "call_notification") {
        // Nothing can answer it: its outcome says so now, beside its intent.
        writes.push(
          this.unrun(
            plan.element.name ?? UNKNOWN_TOOL,
            policySetHashOf(plan.governance),
            frame,
            unanswered(plan.governance, { code: "notification" }),
            plan.element.name,
          ),
        );
      } else if (plan.code === "allow" && plan.element.code === "call") {
        const call = this.begin(plan.element, plan.governance, frame, writes, this.rounds.take(plan.element.name, plan.element.message));
        started.push(call);
      }
    }
    // Bookkeeping for what the server will answer, only now that the frame goes through.
    for (const element of elements) this.note(element);
    await Promise.all(writes);
    const now = this.clock();
    for (const call of started) call.startedAt = now;
    return { code: "forward" };
  }

  private begin(
    element: Extract<ClientElement, { code: "call" }>,
    governance: Governance,
    frame: Buffer,
    writes: Promise<unknown>[],
    continues: string | undefined,
  ): PendingCall {
    const callId = this.mintCallId();
    const call: PendingCall = {
      callId,
      toolId: element.name,
      governance,
      toolSpec: this.specs.digestOf(element.name),
      request: element.message,
      continues,
      startedAt: this.clock(),
      cancelled: false,
    };
    this.calls.set(element.key, call);
    const begun = this.options.writer.beginCall({ call_id: callId, tool_id: element.name, policy_set_hash: policySetHashOf(governance), request: frame });
    writes.push(
      begun.catch((error: unknown) => {
        if (this.calls.get(element.key) === call) this.calls.delete(element.key);
        throw error;
      }),
    );
    if (governance.code === "policy" && governance.axes.approval_ref !== undefined) {
      this.notify({ code: "approval_used", approvalId: governance.axes.approval_ref, toolId: element.name, callId });
    }
    return call;
  }

  /** The round a refused call would have continued (SPEC §17.2): it is a round too, and takes the link. */
  private continuation(element: ClientElement): string | undefined {
    return element.code === "call" ? this.rounds.take(element.name, element.message) : undefined;
  }

  /** A call that did not run: intent and outcome together. */
  private unrun(toolId: string, hash: PolicySetHash, frame: Buffer, result: CallResult, specOf?: string, continues?: string): Promise<Appended> {
    const spec = specOf === undefined ? undefined : this.specs.digestOf(specOf);
    const callId = this.mintCallId();
    const linked = continues === undefined ? result : { ...result, continues_call: continues };
    const write = (): Promise<Appended> =>
      this.options.writer.recordUnrun(
        { call_id: callId, tool_id: toolId, policy_set_hash: hash, request: frame },
        spec === undefined ? linked : { ...linked, tool_spec_digest: spec },
      );
    const waiting = spec === undefined ? undefined : this.specs.keeping(spec);
    return waiting === undefined ? write() : waiting.then(write);
  }

  /** What the server will answer, and what the client told it, noted as the frame goes. */
  private note(element: ClientElement): void {
    match(element)
      .with({ code: "list_tools" }, (e) => void this.listings.set(e.key, e.continued))
      .with({ code: "request" }, (e) => void this.requests.add(e.key))
      .with({ code: "cancel" }, (e) => {
        const call = e.requestKey === undefined ? undefined : this.calls.get(e.requestKey);
        if (call !== undefined) call.cancelled = true;
      })
      .with({ code: "response" }, (e) => {
        if (!this.rootsRequests.delete(e.key)) return;
        const roots = rootsOf(e.message);
        if (roots !== undefined) this.options.gate?.clientNamedRoots(roots);
      })
      .with({ code: "call" }, { code: "call_notification" }, { code: "malformed_call" }, { code: "other" }, () => undefined)
      .exhaustive(unmatched);
  }

  /**
   * Take a server frame. It reaches the client (through `relay`) only when it reads strictly
   * and every answer in it pairs exactly with a request in flight (SPEC §17.2): nothing
   * reaches the client that the record cannot name. Then each answer closes its call, with
   * this frame as its response (a batch's calls share it). Returns whether it was relayed.
   */
  observe(frame: Buffer, relay: (frame: Buffer) => void = () => undefined): boolean {
    try {
      return this.observeFrame(frame, relay);
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  private observeFrame(frame: Buffer, relay: (frame: Buffer) => void): boolean {
    const reading = readFrame(frame);
    if (!reading.ok) {
      this.dropAnswer(frame, { code: "unreadable", unreadable: reading.unreadable }, looksLikeMessage(frame));
      return false;
    }
    const elements = elementsOf(reading.value).map(classifyServer);
    for (const seen of elements) {
      if (seen.code === "unpaired") {
        this.dropAnswer(frame, { code: seen.why }, true);
        return false;
      }
      if (seen.code === "response" && !this.isInFlight(seen.key)) {
        this.dropAnswer(frame, { code: "unpaired_id", key: seen.key }, true);
        return false;
      }
    }
    relay(frame);
    for (const seen of elements) {
      if (seen.code === "roots_request") this.rootsRequests.add(seen.key);
      if (seen.code !== "response") continue;
      const call = this.calls.get(seen.key);
      if (call !== undefined) {
        this.calls.delete(seen.key);
        this.rounds.answered(call.callId, call.toolId, call.request, seen.message);
        this.end(call, answered(call.toolId, call.callId, call.governance, this.clock() - call.startedAt), frame);
        continue;
      }
      const continued = this.listings.get(seen.key);
      if (continued !== undefined) {
        this.listings.delete(seen.key);
        this.pin(seen.message["result"], continued);
      } else this.requests.delete(seen.key);
    }
    return true;
  }

  private isInFlight(key: string): boolean {
    return this.calls.has(key) || this.listings.has(key) || this.requests.has(key);
  }

  /**
   * A server frame kept from the client: said on stderr, and, when it could be a message,
   * recorded by its digest under `<dropped-answer>` (SPEC §17.2).
   */
  private dropAnswer(frame: Buffer, why: DroppedWhy, record: boolean): void {
    this.notify({ code: "answer_dropped", bytes: frame.length, why });
    if (!record || this.failure !== undefined) return;
    const code = why.code === "unreadable" ? why.unreadable.code : why.code;
    this.tracked(this.unrun(DROPPED_ANSWER_TOOL, PASSTHROUGH_POLICY_SET_HASH, frame, droppedAnswer(code))).catch((error: unknown) => this.fail(error));
  }

  private end(call: PendingCall, how: CallResult, response: Buffer | undefined): void {
    const result = call.continues === undefined ? how : { ...how, continues_call: call.continues };
    const withSpec = call.toolSpec === undefined ? result : { ...result, tool_spec_digest: call.toolSpec };
    const writer = this.options.writer;
    const waiting = call.toolSpec === undefined ? undefined : this.specs.keeping(call.toolSpec);
    // An answer has already gone to the client: its outcome shares the next intent's fsync.
    const write = (): Promise<Appended> =>
      response === undefined ? writer.endCall(call.callId, withSpec) : writer.endCall(call.callId, { ...withSpec, response }, { sync: "soon" });
    // Appended now, in the order answers came, unless the definition it names is still being kept.
    const ended = waiting === undefined ? write() : waiting.then(write);
    this.tracked(ended).catch((error: unknown) => {
      if (isEnvelopeRefusal(error)) this.notify({ code: "envelope_refused", callId: call.callId, detail: messageOf(error) });
      else this.fail(error);
    });
  }

  private pin(result: Json | undefined, continued: boolean): void {
    const change = this.specs.ingest(result, continued);
    if (change === undefined) return;
    for (const c of change.changed) this.notify({ code: "tool_changed", ...c });
    if (change.unreadable > 0) this.notify({ code: "unpinnable_tools", count: change.unreadable });
    const sink = this.options.toolSpecs;
    if (sink === undefined) return;
    for (const pin of change.pinned) {
      const put = this.specs.keep(pin, sink);
      if (put !== undefined) {
        this.tracked(put).catch((error: unknown) => this.notify({ code: "envelope_refused", callId: `tool ${pin.name}`, detail: messageOf(error) }));
      }
    }
  }

  /**
   * Record a human's answer to a park as a signed `decision` (SPEC §17.5). Resolves once it
   * is durable; only then can a call run under it.
   */
  answerPark(
    approvalId: string,
    answer: ParkAnswer,
  ): Promise<{ readonly ok: true; readonly appended: Appended } | { readonly ok: false; readonly refusal: ParkRefusal }> {
    return this.tracked(recordParkAnswer(this.options.gate?.parks, this.options.writer, approvalId, answer));
  }

  /**
   * Close every call still in flight with the reason that is true of this end, and wait for
   * every line under way. The writer stays open: its owner closes it.
   */
  async finish(why: Unanswered): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    // Intents still being made durable go first: their calls are in `calls` already.
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
    for (const [key, call] of this.calls) {
      this.calls.delete(key);
      this.end(call, unanswered(call.governance, call.cancelled ? { code: "cancelled" } : why), undefined);
    }
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  private tracked<T>(work: Promise<T>): Promise<T> {
    this.work.add(work);
    const forget = (): void => void this.work.delete(work);
    work.then(forget, forget);
    return work;
  }

  private mintCallId(): string {
    return this.callIds.mint();
  }

  private notify(notice: Notice): void {
    this.options.onNotice?.(notice);
  }

  private fail(error: unknown): Error {
    const failure = error instanceof Error ? error : new Error(String(error));
    if (this.failure === undefined) {
      this.failure = failure;
      this.notify({ code: "record_failed", detail: failure.message });
    }
    return this.failure;
  }
}

/** The Envelope did not keep a response: the outcome was still written, naming it. */
function isEnvelopeRefusal(error: unknown): boolean {
  return error instanceof RecordWriterError && error.fault.code === "envelope";
}
