import { ChainWriterError, type Appended, type CallResult, type ChainWriter, type PolicyOutcome, type PolicySetHash, type ToolSpecDigest } from "@aegis/format";
import { messageOf, unreachable } from "@aegis/format/internal";
import { matchedRuleId } from "@aegis/policy";
import { match } from "ts-pattern";
import type { Gate } from "./gate.js";
import { classifyClient, classifyServer, elementsOf, hasInnerCarriageReturn, parseFrame, rootsOf, type ClientElement, type Json } from "./message.js";
import type { Notice } from "./notice.js";
import {
  PASSTHROUGH_POLICY_SET_HASH,
  UNKNOWN_TOOL,
  answered,
  malformed,
  policySetHashOf,
  refused,
  siblingRefused,
  unanswered,
  type Governance,
  type Unanswered,
} from "./outcomes.js";
import type { ParkAnswer, ParkRefusal } from "./parks.js";
import { ToolSpecs, type ToolSpecSink } from "./pins.js";
import { failedVerdict, unreadableVerdict, type FrameVerdict } from "./frame-verdict.js";
import { planFrame, type Planned } from "./plan.js";
import { refusalFrame, type Refusal, type RefusalCode } from "./refusal.js";

export interface RecorderOptions {
  /** The record. The recorder writes through it and never closes it. */
  readonly writer: ChainWriter;
  /** Enforcement: without it, every call is relayed and recorded (the pass-through). */
  readonly gate?: Gate;
  /** Where tool definitions are kept: give the Envelope the writer keeps bytes in. */
  readonly toolSpecs?: ToolSpecSink;
  /** Milliseconds, for `wall_ms`. Default `performance.now()`. */
  readonly clock?: () => number;
  readonly onNotice?: (notice: Notice) => void;
  /** The control socket's path, named in a park's notice. */
  readonly control?: string;
}

interface PendingCall {
  readonly callId: string;
  readonly toolId: string;
  readonly governance: Governance;
  readonly toolSpec: ToolSpecDigest | undefined;
  startedAt: number;
  cancelled: boolean;
}

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
  /** Intents being made durable, and outcomes being written: finish() waits for both. */
  private readonly work = new Set<Promise<unknown>>();
  private nextCall = 1;
  private failure: Error | undefined;
  private finished = false;
  private readonly clock: () => number;

  constructor(private readonly options: RecorderOptions) {
    this.clock = options.clock ?? (() => performance.now());
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
   * the frame. A frame whose calls cannot be recorded never reaches the server.
   */
  admit(frame: Buffer, parsed: Json | undefined = parseFrame(frame)): Promise<FrameVerdict> {
    try {
      return this.admitParsed(frame, parsed);
    } catch (error) {
      // A bug of ours must not let a frame through, nor end the relay: nothing runs unrecorded.
      return Promise.resolve(failedVerdict(parsed, this.fail(error)));
    }
  }

  private admitParsed(frame: Buffer, parsed: Json | undefined): Promise<FrameVerdict> {
    if (this.failure !== undefined) return Promise.resolve(failedVerdict(parsed, this.failure));
    // A frame another reader could split into messages wrap did not read, and (under a Policy
    // Set) a frame wrap cannot read at all, never reach the server (SPEC §17.1).
    const unreadable = hasInnerCarriageReturn(frame) ? "inner_cr" : parsed === undefined && this.options.gate !== undefined ? "not_json" : undefined;
    if (unreadable !== undefined) {
      this.notify({ code: "unreadable_frame", bytes: frame.length, why: unreadable });
      return Promise.resolve(unreadableVerdict(unreadable));
    }
    // Not JSON: not a message, relayed as the bytes it is (SPEC §17.1).
    if (parsed === undefined) return Promise.resolve({ code: "forward" });
    const batch = Array.isArray(parsed);
    const elements = elementsOf(parsed).map(classifyClient);
    const plans = planFrame(elements, frame, {
      inFlight: (key) => this.calls.has(key) || this.listings.has(key) || this.requests.has(key),
      isCall: (key) => this.calls.has(key),
      ...(this.options.gate === undefined ? {} : { gate: this.options.gate }),
      notify: (notice) => this.notify(notice),
    });
    const refusing = plans.some((p) => p.code === "refuse" || p.code === "duplicate");
    const ready = refusing ? this.refuseFrame(plans, frame, batch) : this.forwardFrame(plans, elements, frame);
    return this.tracked(ready).catch((error: unknown) => failedVerdict(parsed, this.fail(error)));
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
        const call = this.begin(plan.element, plan.governance, frame, writes);
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

  private begin(element: Extract<ClientElement, { code: "call" }>, governance: Governance, frame: Buffer, writes: Promise<unknown>[]): PendingCall {
    const callId = this.mintCallId();
    const call: PendingCall = {
      callId,
      toolId: element.name,
      governance,
      toolSpec: this.specs.digestOf(element.name),
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

  /** The frame stops here: record every call it carried as not run, and answer the client. */
  private async refuseFrame(plans: readonly Planned[], frame: Buffer, batch: boolean): Promise<FrameVerdict> {
    const writes: Promise<unknown>[] = [];
    const refusals: Refusal[] = [];
    for (const plan of plans) {
      const element = plan.element;
      const toolId = element.code === "call" || element.code === "call_notification" ? (element.name ?? UNKNOWN_TOOL) : UNKNOWN_TOOL;
      const answer = (code: RefusalCode, detail: Refusal["detail"] = {}): void => {
        if (element.code === "call" || element.code === "malformed_call") refusals.push({ id: element.id, code, detail });
      };
      match(plan)
        .with({ code: "malformed" }, () => {
          writes.push(this.unrun(UNKNOWN_TOOL, PASSTHROUGH_POLICY_SET_HASH, frame, malformed("no_name")));
          answer("HOST_DENIED", { reason: "tools/call without a string params.name" });
        })
        .with({ code: "duplicate" }, (p) => {
          const reason = "a request with this id is still in flight; MCP forbids reusing a request id";
          // A call is recorded as refused; another request reusing a call's id runs nothing.
          if (p.element.code === "call" || p.element.code === "malformed_call") {
            writes.push(this.unrun(toolId, PASSTHROUGH_POLICY_SET_HASH, frame, malformed("duplicate_id"), toolId));
            answer("DUPLICATE_REQUEST_ID", { reason });
          } else refusals.push({ id: p.element.id, code: "DUPLICATE_REQUEST_ID", detail: { reason } });
        })
        .with({ code: "allow" }, (p) => {
          const governance = p.governance;
          const policy: PolicyOutcome = governance.code === "policy" ? governance.policy : { status: "allowed" };
          const axes = governance.code === "policy" ? governance.axes : {};
          writes.push(this.unrun(toolId, policySetHashOf(governance), frame, siblingRefused(policy, axes), toolId));
          answer("HOST_DENIED", { reason: "another call in this batch was refused, so the batch did not reach the server" });
        })
        .with({ code: "refuse" }, (p) => {
          const hash = p.verdict?.decision.policy_set_hash ?? PASSTHROUGH_POLICY_SET_HASH;
          writes.push(this.unrun(toolId, hash, frame, refused(p.policy, p.axes), toolId));
          const decision = p.verdict?.decision;
          const rule = decision === undefined ? undefined : matchedRuleId(decision.matched);
          answer(p.refusal, {
            ...(rule === undefined ? {} : { rule }),
            ...(decision === undefined ? {} : { reason: decision.reason }),
            ...(p.policy.status === "pending_approval" ? { approval_id: p.policy.approval_id } : {}),
          });
          const parked = p.verdict?.parked;
          if (parked !== undefined) this.notify({ code: "parked", approvalId: parked.approvalId, toolId, rule: parked.rule, control: this.options.control });
        })
        .exhaustive(unreachable);
    }
    await Promise.all(writes);
    if (refusals.length === 0) return { code: "drop" };
    return { code: "answer", frame: refusalFrame(refusals, batch) };
  }

  /** A call that did not run: intent and outcome together. */
  private unrun(toolId: string, hash: PolicySetHash, frame: Buffer, result: CallResult, specOf?: string): Promise<Appended> {
    const spec = specOf === undefined ? undefined : this.specs.digestOf(specOf);
    const callId = this.mintCallId();
    const write = (): Promise<Appended> =>
      this.options.writer.recordUnrun(
        { call_id: callId, tool_id: toolId, policy_set_hash: hash, request: frame },
        spec === undefined ? result : { ...result, tool_spec_digest: spec },
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
        if (roots !== undefined) this.options.gate?.learnRoots(roots);
      })
      .with({ code: "call" }, { code: "call_notification" }, { code: "malformed_call" }, { code: "other" }, () => undefined)
      .exhaustive(unreachable);
  }

  /**
   * Take a server frame, after it was sent on to the client: each response-shaped element
   * closes the call it answers, with this frame as its response (a batch's calls share it).
   */
  observe(frame: Buffer, parsed: Json | undefined = parseFrame(frame)): void {
    try {
      this.observeParsed(frame, parsed);
    } catch (error) {
      this.fail(error);
    }
  }

  private observeParsed(frame: Buffer, parsed: Json | undefined): void {
    if (parsed === undefined) return;
    for (const element of elementsOf(parsed)) {
      const seen = classifyServer(element);
      if (seen.code === "roots_request") this.rootsRequests.add(seen.key);
      if (seen.code !== "response") continue;
      const call = this.calls.get(seen.key);
      if (call !== undefined) {
        this.calls.delete(seen.key);
        this.end(call, answered(call.toolId, call.callId, call.governance, this.clock() - call.startedAt), frame);
        continue;
      }
      const continued = this.listings.get(seen.key);
      if (continued !== undefined) {
        this.listings.delete(seen.key);
        this.pin(seen.message["result"], continued);
      } else this.requests.delete(seen.key);
    }
  }

  private end(call: PendingCall, result: CallResult, response: Buffer | undefined): void {
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
  async answerPark(
    approvalId: string,
    answer: ParkAnswer,
  ): Promise<{ readonly ok: true; readonly appended: Appended } | { readonly ok: false; readonly refusal: ParkRefusal }> {
    const parks = this.options.gate?.parks;
    if (parks === undefined) return { ok: false, refusal: { code: "unknown_approval", approvalId } };
    const decided = parks.decide(approvalId, answer);
    if (!decided.ok) return decided;
    let appended: Appended;
    try {
      appended = await this.tracked(this.options.writer.decision(decided.decision));
    } catch (error) {
      parks.unsettle(decided.park);
      throw error;
    }
    parks.settle(decided.park, answer);
    return { ok: true, appended };
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
    return `call-${this.nextCall++}`;
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
  return error instanceof ChainWriterError && error.fault.code === "envelope";
}
