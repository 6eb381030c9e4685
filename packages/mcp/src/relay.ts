import { unreachable } from "@aegis/format/internal";
import type { Readable, Writable } from "node:stream";
import { FrameSplitter, isBlankFrame, type FrameEvent } from "./frames.js";
import { RequestDigest } from "@aegis/format";
import type { FrameVerdict } from "./frame-verdict.js";
import { reasonFor, transition, type LifeEvent, type Phase, type Sides } from "./lifecycle.js";
import type { Notice, StreamName } from "./notice.js";
import { readFrame } from "./strict-frame.js";
import type { Unanswered } from "./outcomes.js";
import type { McpRecorder } from "./recorder.js";

/**
 * The pump between a client and a server over newline-framed byte streams (SPEC §17.1).
 *
 * Client to server: record first, then relay. A frame reaches the server only after every
 * intent it carries is durable, and frames reach it in the order they came; frames that
 * arrive together have their intents made durable together (one fsync for many).
 *
 * Server to client: relay first, then record. The client never waits for an outcome.
 */
export interface RelayEnds {
  readonly clientIn: Readable;
  readonly clientOut: Writable;
  readonly serverIn: Writable;
  readonly serverOut: Readable;
  /**
   * `serverOut` yields one message a chunk, already within the bound (an HTTP server's,
   * SPEC §17.10), not newline-framed bytes.
   */
  readonly serverFramed?: boolean;
}

export interface RelayOptions {
  readonly recorder: McpRecorder;
  readonly maxFrameBytes: number;
  /**
   * After the client hangs up, how long the server may stay silent before wrap stops
   * waiting for it. Every byte it sends re-arms the wait: it bounds silence, not work.
   */
  readonly graceMs: number;
  /** After a stop is asked for (a signal), how long answers in flight are still awaited. */
  readonly stopGraceMs: number;
  readonly onNotice: (notice: Notice) => void;
  /** What stands on each side (default stdio and a child): the reasons recorded say so (SPEC §17.10). */
  readonly sides?: Sides;
  /**
   * Write each client frame that reads strictly as `JSON.stringify` writes its value, before
   * it is recorded and sent on (SPEC §17.10): what crosses HTTP is that JSON text, and the
   * record names exactly the bytes sent.
   */
  readonly reencode?: boolean;
}

/** How the pump ended. */
export interface RelayEnd {
  /** Why the calls still in flight went unanswered. */
  readonly why: Unanswered;
  /** The server's output ended while the client was still connected. */
  readonly serverEndedFirst: boolean;
  /** The record could not be written. */
  readonly failure: Error | undefined;
}

const NEWLINE = Buffer.from("\n");
/** Past this many client frames waiting on their intents, stop reading the client. */
const MAX_QUEUED_FRAMES = 1024;

/** A stream the relay writes to: open, full (it asked the writer to wait for `drain`), or closed. */
type Outlet = { readonly code: "open" } | { readonly code: "full" } | { readonly code: "closed" };

export class Relay {
  private readonly clientFrames: FrameSplitter;
  private readonly serverFrames: FrameSplitter;
  private phase: Phase = { code: "relaying" };
  /** Client frames in order: each link forwards one frame once its intents are durable. */
  private forwarding: Promise<void> = Promise.resolve();
  private queued = 0;
  // The streams the relay writes, apart from the lifecycle: each open, full (waiting for
  // `drain`) or closed.
  private serverIn: Outlet = { code: "open" };
  private clientOut: Outlet = { code: "open" };
  private grace: NodeJS.Timeout | undefined;
  private resolveEnd: ((end: RelayEnd) => void) | undefined;

  constructor(
    private readonly ends: RelayEnds,
    private readonly options: RelayOptions,
  ) {
    this.clientFrames = new FrameSplitter(options.maxFrameBytes);
    this.serverFrames = new FrameSplitter(options.maxFrameBytes);
  }

  /** Pump until the server's output ends, or the grace after the client's runs out. */
  run(): Promise<RelayEnd> {
    const { clientIn, serverOut, serverIn, clientOut } = this.ends;
    const done = new Promise<RelayEnd>((resolve) => (this.resolveEnd = resolve));
    clientIn.on("data", (chunk: Buffer) => this.fromClient(this.clientFrames.push(chunk)));
    clientIn.on("end", () => this.clientEnded());
    // A stream's error is said, then taken as what it means for the Session: never dropped.
    clientIn.on("error", (error: Error) => {
      this.failed("client_in", error);
      this.clientEnded();
    });
    if (this.ends.serverFramed === true) serverOut.on("data", (message: Buffer) => this.fromServer([{ code: "frame", bytes: message }]));
    else serverOut.on("data", (chunk: Buffer) => this.fromServer(this.serverFrames.push(chunk)));
    serverOut.on("end", () => this.serverEnded());
    serverOut.on("error", (error: Error) => {
      this.failed("server_out", error);
      this.serverEnded();
    });
    // A server that stopped reading: its frames can no longer be delivered.
    serverIn.on("error", (error: Error) => {
      this.failed("server_in", error);
      this.serverIn = { code: "closed" };
    });
    clientOut.on("error", (error: Error) => {
      this.failed("client_out", error);
      this.clientOut = { code: "closed" };
      this.happen({ code: "client_gone" });
    });
    return done;
  }

  /**
   * Stop: read no more from the client, close the server's input, and wait `stopGraceMs`
   * for answers already asked for, then end (SPEC §17.7). Asked twice, end at once.
   */
  stop(signal: string): void {
    this.happen({ code: "signal", signal });
  }

  private failed(stream: StreamName, error: Error): void {
    this.options.onNotice({ code: "stream_failed", stream, detail: error.message });
  }

  /** The one place the lifecycle moves: the transition, then what entering the new phase asks. */
  private happen(event: LifeEvent): void {
    const before = this.phase;
    const after = transition(before, event);
    if (after === before) return;
    this.phase = after;
    switch (after.code) {
      case "relaying":
        return;
      case "draining":
        this.hangUpClient();
        this.armGrace(this.options.graceMs);
        return;
      case "stopping":
        this.hangUpClient();
        this.armGrace(this.options.stopGraceMs);
        return;
      case "ended":
        if (this.grace !== undefined) clearTimeout(this.grace);
        this.grace = undefined;
        this.hangUpClient();
        this.resolveEnd?.({
          why: reasonFor(after.why, this.options.sides ?? { client: "stdio", server: "child" }),
          serverEndedFirst: after.serverEndedFirst,
          failure: this.options.recorder.failed,
        });
        return;
    }
  }

  private fromClient(events: readonly FrameEvent[]): void {
    for (const event of events) {
      if (this.phase.code !== "relaying") return;
      if (event.code === "oversize") {
        const limit = this.options.maxFrameBytes;
        this.enqueue(this.options.recorder.refuseOversize(event.bytes, RequestDigest.parse(event.sha256), limit), undefined);
        continue;
      }
      if (isBlankFrame(event.bytes)) continue;
      if (this.options.reencode !== true) {
        this.enqueue(this.options.recorder.admit(event.bytes), event.bytes);
        continue;
      }
      // Read once: the value read is the recorder's reading of the bytes written again too.
      const reading = readFrame(event.bytes);
      const bytes = reading.ok ? Buffer.from(JSON.stringify(reading.value), "utf8") : event.bytes;
      this.enqueue(this.options.recorder.admit(bytes, reading), bytes);
    }
  }

  private enqueue(verdict: Promise<FrameVerdict>, frame: Buffer | undefined): void {
    this.queued++;
    if (this.queued >= MAX_QUEUED_FRAMES) this.ends.clientIn.pause();
    // Verdicts never reject (the recorder turns its failures into a "failed" verdict).
    this.forwarding = this.forwarding.then(async () => {
      this.act(await verdict, frame);
      this.queued--;
      this.resumeClient();
    });
  }

  /** On every client frame's path: a switch the compiler checks, not a matcher built per frame. */
  private act(verdict: FrameVerdict, frame: Buffer | undefined): void {
    switch (verdict.code) {
      case "forward":
        if (frame !== undefined) this.toServer(frame);
        return;
      case "answer":
        this.toClient(verdict.frame);
        return;
      case "drop":
        return;
      case "failed":
        if (verdict.frame !== undefined) this.toClient(verdict.frame);
        // No call may run without its record: read nothing more, and let the server go.
        this.happen({ code: "record_failed" });
        return;
      default:
        return unreachable(verdict);
    }
  }

  private toServer(frame: Buffer): void {
    if (this.serverIn.code === "closed") return;
    const serverIn = this.ends.serverIn;
    if (!writeFrame(serverIn, frame) && this.serverIn.code === "open") {
      // The server reads slower than the client writes: hold the client until it drains.
      this.serverIn = { code: "full" };
      this.ends.clientIn.pause();
      serverIn.once("drain", () => {
        if (this.serverIn.code === "full") this.serverIn = { code: "open" };
        this.resumeClient();
      });
    }
  }

  /**
   * `now`: a server's answer leaves at once, before the recorder seals and signs its outcome
   * (which it does as soon as this returns), so the client never waits for the signature.
   */
  private toClient(frame: Buffer, when: "now" | "turn_end" = "turn_end"): void {
    if (this.clientOut.code === "closed") return;
    const clientOut = this.ends.clientOut;
    if (!writeFrame(clientOut, frame, when) && this.clientOut.code === "open") {
      this.clientOut = { code: "full" };
      this.ends.serverOut.pause();
      clientOut.once("drain", () => {
        if (this.clientOut.code === "full") this.clientOut = { code: "open" };
        this.ends.serverOut.resume();
      });
    }
  }

  /** Read from the client again, unless frames are piling up or the server is not reading. */
  private resumeClient(): void {
    if (this.phase.code === "relaying" && this.serverIn.code !== "full" && this.queued < MAX_QUEUED_FRAMES / 2) this.ends.clientIn.resume();
  }

  private fromServer(events: readonly FrameEvent[]): void {
    // Any output proves the server alive and working: the grace after the client hung up
    // starts again. Not after a signal: then the grace is a fixed budget (SPEC §17.7).
    if (this.phase.code === "draining") this.armGrace(this.options.graceMs);
    for (const event of events) {
      if (event.code === "oversize") {
        this.options.onNotice({ code: "oversize_frame", from: "server", bytes: event.bytes, limit: this.options.maxFrameBytes });
        continue;
      }
      if (isBlankFrame(event.bytes)) continue;
      // Only what the record can name reaches the client (SPEC §17.2).
      this.options.recorder.observe(event.bytes, (frame) => this.toClient(frame, "now"));
    }
  }

  private clientEnded(): void {
    if (this.phase.code !== "relaying") return;
    const last = this.clientFrames.end();
    if (last !== undefined) this.fromClient([last]);
    this.happen({ code: "client_ended" });
  }

  /** Read nothing more from the client; once every queued frame is through, close the server's input. */
  private hangUpClient(): void {
    const clientIn = this.ends.clientIn;
    clientIn.pause();
    clientIn.removeAllListeners("data");
    void this.forwarding.then(() => {
      if (this.serverIn.code === "closed") return;
      this.serverIn = { code: "closed" };
      this.ends.serverIn.end();
    });
  }

  private armGrace(ms: number): void {
    if (this.grace !== undefined) clearTimeout(this.grace);
    this.grace = setTimeout(() => this.happen({ code: "grace_over" }), ms);
  }

  private serverEnded(): void {
    const last = this.serverFrames.end();
    if (last !== undefined) this.fromServer([last]);
    this.happen({ code: "server_ended" });
  }
}

/** Frames up to this size are written with their `\n` in one write (one syscall, not two). */
const JOINED_WRITE_BYTES = 64 * 1024;

const corked = new WeakSet<Writable>();

/**
 * Write a frame and its `\n`; false when the stream asks the writer to wait for `drain`.
 * Frames written `turn_end` in one turn of the event loop (several requests made durable by
 * one fsync) leave in one write: each write wakes the reader. A frame written `now` leaves at
 * once, behind any held in this turn.
 */
function writeFrame(stream: Writable, frame: Buffer, when: "now" | "turn_end" = "turn_end"): boolean {
  if (when === "turn_end" && !corked.has(stream)) {
    corked.add(stream);
    stream.cork();
    process.nextTick(() => {
      corked.delete(stream);
      stream.uncork();
    });
  }
  if (frame.length <= JOINED_WRITE_BYTES) return stream.write(Buffer.concat([frame, NEWLINE], frame.length + 1));
  stream.write(frame);
  return stream.write(NEWLINE);
}
