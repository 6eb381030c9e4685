import { unreachable } from "@aegis/format/internal";
import type { Readable, Writable } from "node:stream";
import { match } from "ts-pattern";
import { FrameSplitter, isBlankFrame, type FrameEvent } from "./frames.js";
import type { Notice } from "./notice.js";
import type { Unanswered } from "./outcomes.js";
import type { FrameVerdict } from "./frame-verdict.js";
import type { McpRecorder } from "./recorder.js";
import { refusalFrame } from "./refusal.js";

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

export class Relay {
  private readonly clientFrames: FrameSplitter;
  private readonly serverFrames: FrameSplitter;
  /** Client frames in order: each link forwards one frame once its intents are durable. */
  private forwarding: Promise<void> = Promise.resolve();
  private queued = 0;
  private clientOpen = true;
  private serverInOpen = true;
  private clientWritable = true;
  private stopping: string | undefined;
  /** The server's stdin (or the client's stdout) asked us to wait for `drain`. */
  private serverBusy = false;
  private clientBusy = false;
  private grace: NodeJS.Timeout | undefined;
  private graceReason: Unanswered = { code: "grace_expired" };
  private ended = false;
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
    clientIn.on("error", () => this.clientEnded());
    serverOut.on("data", (chunk: Buffer) => this.fromServer(this.serverFrames.push(chunk)));
    serverOut.on("end", () => this.serverEnded());
    serverOut.on("error", () => this.serverEnded());
    // A server that stopped reading: its frames can no longer be delivered.
    serverIn.on("error", () => (this.serverInOpen = false));
    // A client that went away: nothing more can reach it; treat it as hanging up.
    clientOut.on("error", () => {
      this.clientWritable = false;
      this.clientEnded();
    });
    return done;
  }

  /**
   * Stop: read no more from the client, close the server's input, and wait `stopGraceMs`
   * for answers already asked for, then end (SPEC §17.7). Asked twice, end at once.
   */
  stop(signal: string): void {
    const again = this.stopping !== undefined;
    this.stopping = signal;
    this.graceReason = { code: "signalled", signal };
    if (again) {
      this.finish({ code: "signalled", signal });
      return;
    }
    this.hangUpClient();
    this.armGrace(this.options.stopGraceMs);
  }

  private fromClient(events: readonly FrameEvent[]): void {
    for (const event of events) {
      if (this.stopping !== undefined) return;
      if (event.code === "oversize") {
        this.options.onNotice({ code: "oversize_frame", from: "client", bytes: event.bytes, limit: this.options.maxFrameBytes });
        const answer = refusalFrame(
          [
            {
              id: null,
              code: "FRAME_TOO_LARGE",
              detail: { reason: `the frame was ${event.bytes} bytes, over the relay's ${this.options.maxFrameBytes}-byte bound` },
            },
          ],
          false,
        );
        this.enqueue(Promise.resolve({ code: "answer", frame: answer }), undefined);
        continue;
      }
      if (isBlankFrame(event.bytes)) continue;
      this.enqueue(this.options.recorder.admit(event.bytes), event.bytes);
    }
  }

  private enqueue(verdict: Promise<FrameVerdict>, frame: Buffer | undefined): void {
    this.queued++;
    if (this.queued >= MAX_QUEUED_FRAMES) this.ends.clientIn.pause();
    this.forwarding = this.forwarding
      .then(() => verdict)
      .then((v) => this.act(v, frame))
      .finally(() => {
        this.queued--;
        this.resumeClient();
      });
  }

  private act(verdict: FrameVerdict, frame: Buffer | undefined): void {
    match(verdict)
      .with({ code: "forward" }, () => frame !== undefined && this.toServer(frame))
      .with({ code: "answer" }, (v) => this.toClient(v.frame))
      .with({ code: "drop" }, () => undefined)
      .with({ code: "failed" }, (v) => {
        if (v.frame !== undefined) this.toClient(v.frame);
        // No call may run without its record: read nothing more, and let the server go.
        this.hangUpClient();
        this.armGrace(this.options.graceMs);
      })
      .exhaustive(unreachable);
  }

  private toServer(frame: Buffer): void {
    if (!this.serverInOpen) return;
    const serverIn = this.ends.serverIn;
    if (!writeFrame(serverIn, frame) && !this.serverBusy) {
      // The server reads slower than the client writes: hold the client until it drains.
      this.serverBusy = true;
      this.ends.clientIn.pause();
      serverIn.once("drain", () => {
        this.serverBusy = false;
        this.resumeClient();
      });
    }
  }

  private toClient(frame: Buffer): void {
    if (!this.clientWritable) return;
    const clientOut = this.ends.clientOut;
    if (!writeFrame(clientOut, frame) && !this.clientBusy) {
      this.clientBusy = true;
      this.ends.serverOut.pause();
      clientOut.once("drain", () => {
        this.clientBusy = false;
        this.ends.serverOut.resume();
      });
    }
  }

  /** Read from the client again, unless frames are piling up or the server is not reading. */
  private resumeClient(): void {
    if (this.clientOpen && this.stopping === undefined && !this.serverBusy && this.queued < MAX_QUEUED_FRAMES / 2) this.ends.clientIn.resume();
  }

  private fromServer(events: readonly FrameEvent[]): void {
    // Any output proves the server alive and working: the grace after the client hung up
    // starts again. Not after a signal: then the grace is a fixed budget (SPEC §17.7).
    if (this.grace !== undefined && this.stopping === undefined) this.armGrace(this.options.graceMs);
    for (const event of events) {
      if (event.code === "oversize") {
        this.options.onNotice({ code: "oversize_frame", from: "server", bytes: event.bytes, limit: this.options.maxFrameBytes });
        continue;
      }
      if (isBlankFrame(event.bytes)) continue;
      this.toClient(event.bytes);
      this.options.recorder.observe(event.bytes);
    }
  }

  private clientEnded(): void {
    if (!this.clientOpen) return;
    const last = this.clientFrames.end();
    if (last !== undefined && this.stopping === undefined) this.fromClient([last]);
    this.hangUpClient();
    this.armGrace(this.options.graceMs);
  }

  /** Read nothing more from the client; once every queued frame is through, close the server's input. */
  private hangUpClient(): void {
    if (this.clientOpen) {
      this.clientOpen = false;
      this.ends.clientIn.pause();
      this.ends.clientIn.removeAllListeners("data");
    }
    void this.forwarding.then(() => {
      if (!this.serverInOpen) return;
      this.serverInOpen = false;
      this.ends.serverIn.end();
    });
  }

  private armGrace(ms: number): void {
    if (this.ended) return;
    if (this.grace !== undefined) clearTimeout(this.grace);
    this.grace = setTimeout(() => this.finish(this.graceReason), ms);
  }

  private serverEnded(): void {
    const last = this.serverFrames.end();
    if (last !== undefined) this.fromServer([last]);
    const serverEndedFirst = this.clientOpen && this.stopping === undefined;
    this.finish(this.stopping === undefined ? { code: "child_exited" } : { code: "signalled", signal: this.stopping }, serverEndedFirst);
  }

  private finish(why: Unanswered, serverEndedFirst = false): void {
    if (this.ended) return;
    this.ended = true;
    if (this.grace !== undefined) clearTimeout(this.grace);
    this.grace = undefined;
    if (this.clientOpen) {
      this.clientOpen = false;
      this.ends.clientIn.pause();
      this.ends.clientIn.removeAllListeners("data");
    }
    this.resolveEnd?.({ why, serverEndedFirst, failure: this.options.recorder.failed });
  }
}

/** Frames up to this size are written with their `\n` in one write (one syscall, not two). */
const JOINED_WRITE_BYTES = 64 * 1024;

const corked = new WeakSet<Writable>();

/**
 * Write a frame and its `\n`; false when the stream asks the writer to wait for `drain`.
 * Frames written in one turn of the event loop (several answers in one chunk, several
 * requests made durable by one fsync) leave in one write: each write wakes the reader.
 */
function writeFrame(stream: Writable, frame: Buffer): boolean {
  if (!corked.has(stream)) {
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
