/**
 * An event stream (WHATWG HTML, "Server-sent events") as a `--url` server sends it (SPEC
 * §17.10), read at the byte level and bounded before anything is held whole (SPEC §17.1): an
 * event is held only while its bytes as they came (field names and line ends included, up to
 * and including the blank line that ends it) are within the bound; one over it is counted as
 * it passes and reaches no one.
 *
 * An event's data is bytes, never text: a message is judged by the strict reader, which
 * refuses what is not UTF-8, so nothing here decodes or replaces a byte.
 */
export interface MessageBound {
  /** The most bytes one message may hold: one event as it came, or one JSON body. */
  readonly maxMessageBytes: number;
  /** A message over the bound was dropped; `bytes` is how many it held. */
  readonly onOversize: (bytes: number) => void;
}

/** One event, its fields read. */
export interface ServerSentEvent {
  /** The `event` field; `message` when there is none. */
  readonly type: string;
  /** The `data` lines, joined by `\n`; empty when there were none. */
  readonly data: Buffer;
  /** The `id` field, when the event had one: where a reconnection resumes from. */
  readonly id: string | undefined;
  /** The `retry` field, when it was a number: how long to wait before reconnecting, in ms. */
  readonly retry: number | undefined;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const EMPTY = Buffer.alloc(0);

/** An event stream read event by event: `push` each chunk as it comes, `end` when the body ends. */
export class EventReader {
  private readonly events: EventSplitter;
  private first = true;

  constructor(bound: MessageBound, onEvent: (event: ServerSentEvent) => void) {
    this.events = new EventSplitter(bound, (bytes) => onEvent(fieldsOf(bytes)));
  }

  push(chunk: Buffer): void {
    if (this.first && chunk.length > 0) {
      this.first = false;
      // One byte-order mark at the very start is not part of the stream.
      if (chunk.subarray(0, 3).equals(BOM)) chunk = chunk.subarray(3);
    }
    this.events.push(chunk);
  }

  /** The body ended: an event never ended by a blank line is dropped, as the standard says. */
  end(): void {
    this.events.end();
  }
}

/** The fields of one event, given its bytes up to and including the blank line that ends it. */
export function fieldsOf(bytes: Buffer): ServerSentEvent {
  let type = "message";
  let id: string | undefined;
  let retry: number | undefined;
  const data: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    let end = at;
    while (end < bytes.length && bytes[end] !== LF && bytes[end] !== CR) end++;
    const line = bytes.subarray(at, end);
    at = end + (bytes[end] === CR && bytes[end + 1] === LF ? 2 : 1);
    if (line.length === 0 || line[0] === COLON) continue;
    const colon = line.indexOf(COLON);
    const name = (colon === -1 ? line : line.subarray(0, colon)).toString("latin1");
    let value = colon === -1 ? EMPTY : line.subarray(colon + 1);
    if (value[0] === SPACE) value = value.subarray(1);
    switch (name) {
      case "data":
        data.push(value);
        break;
      case "event":
        type = value.toString("utf8");
        break;
      case "id":
        // An id holding NUL is ignored, as the standard says.
        if (!value.includes(0)) id = value.toString("utf8");
        break;
      case "retry":
        if (/^[0-9]+$/.test(value.toString("latin1"))) retry = Number(value.toString("latin1"));
        break;
      // Any other field is ignored, as the standard says.
    }
  }
  return { type: type === "" ? "message" : type, data: joinData(data), id, retry };
}

function joinData(lines: readonly Buffer[]): Buffer {
  const [only] = lines;
  if (lines.length === 1 && only !== undefined) return only;
  const parts: Buffer[] = [];
  lines.forEach((line, i) => parts.push(...(i === 0 ? [line] : [Buffer.from([LF]), line])));
  return Buffer.concat(parts);
}

/**
 * The byte level: a stream cut into events, each passed on whole once a blank line ended it.
 * An event longer than the bound is dropped, never held whole.
 */
export class EventSplitter {
  /** The current event's bytes so far, while it is within the bound. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The current event's bytes counted once it went over the bound; undefined while within it. */
  private dropped: number | undefined;
  /** Bytes of the current line so far, its end not yet seen. */
  private lineBytes = 0;
  /** The last byte seen ended a line with a CR: an LF next is part of that line end. */
  private afterCr = false;
  /** The event ended with a CR at the end of the last chunk: an LF first in the next is its last byte. */
  private endsAfterCr = false;

  constructor(
    private readonly bound: MessageBound,
    private readonly emit: (event: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    let from = 0;
    let at = 0;
    if (this.endsAfterCr) {
      this.endsAfterCr = false;
      this.afterCr = false;
      if (chunk[0] === LF) from = at = 1;
      this.ended(chunk.subarray(0, from));
    }
    let nextLf = -2;
    let nextCr = -2;
    while (at < chunk.length) {
      if (this.afterCr) {
        this.afterCr = false;
        if (chunk[at] === LF) {
          at++;
          continue;
        }
      }
      if (nextLf !== -1 && nextLf < at) nextLf = chunk.indexOf(LF, at);
      if (nextCr !== -1 && nextCr < at) nextCr = chunk.indexOf(CR, at);
      const end = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      if (end === -1) {
        this.lineBytes += chunk.length - at;
        break;
      }
      const blank = this.lineBytes + (end - at) === 0;
      this.lineBytes = 0;
      this.afterCr = chunk[end] === CR;
      at = end + 1;
      if (!blank) continue;
      if (this.afterCr && at === chunk.length) {
        // A CR last in the chunk: whether an LF follows, and so the event's last byte, is in the next one.
        this.hold(chunk.subarray(from, at));
        this.endsAfterCr = true;
        return;
      }
      if (this.afterCr && chunk[at] === LF) {
        this.afterCr = false;
        at++;
      }
      this.ended(chunk.subarray(from, at));
      from = at;
    }
    if (from < chunk.length) this.hold(chunk.subarray(from));
  }

  private hold(part: Buffer): void {
    if (part.length === 0) return;
    if (this.dropped !== undefined) this.dropped += part.length;
    else if (this.heldBytes + part.length > this.bound.maxMessageBytes) {
      this.dropped = this.heldBytes + part.length;
      this.held = [];
      this.heldBytes = 0;
    } else {
      this.held.push(part);
      this.heldBytes += part.length;
    }
  }

  /** The event ends with `last`: passed on whole, or counted and dropped. */
  private ended(last: Buffer): void {
    this.hold(last);
    if (this.dropped !== undefined) this.bound.onOversize(this.dropped);
    else {
      const [only] = this.held;
      this.emit(this.held.length === 1 && only !== undefined ? only : Buffer.concat(this.held));
    }
    this.held = [];
    this.heldBytes = 0;
    this.dropped = undefined;
  }

  /** The stream ended: an event whose CR was the last byte ends; one never ended is dropped, as a parser would. */
  end(): void {
    if (this.endsAfterCr) this.ended(EMPTY);
    this.endsAfterCr = false;
  }
}
