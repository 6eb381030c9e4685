/**
 * The frame bound of SPEC §17.1 on what a `--url` server sends (SPEC §17.10), applied before
 * anything is buffered whole: the SDK's transport reads an event stream with a parser that
 * holds an event until it ends, and a JSON body with `response.json()`, so a server that never
 * ends a message held wrap's memory without bound. Here, below the transport, a body is cut
 * into messages at the byte level, each held at most up to the bound: a message over it is
 * counted as it passes, never held, and reaches no one (the call it answered stays unanswered,
 * as on stdio); everything else reaches the transport byte for byte.
 */
export interface ResponseBound {
  /** The most bytes one message may hold: one server-sent event, or one JSON body. */
  readonly maxMessageBytes: number;
  /** A message over the bound was dropped; `bytes` is how many it held. */
  readonly onOversize: (bytes: number) => void;
}

type Fetch = typeof fetch;

/** `base`, with every response's messages bounded. */
export function boundedFetch(base: Fetch, bound: ResponseBound): Fetch {
  return async (input, init) => {
    const response = await base(input, init);
    const body = response.body;
    // A redirect is read by the SDK's redirect check as it came; 204 and 205 have no body.
    if (body === null || (response.status >= 300 && response.status < 400) || response.status === 204 || response.status === 205) return response;
    const like = { status: response.status, statusText: response.statusText, headers: response.headers };
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    if (response.ok && type === "text/event-stream") return new Response(body.pipeThrough(eventsWithin(bound)), like);
    if (response.ok && type === "application/json") return new Response(await jsonWithin(body, bound), like);
    // An error's text, which the transport reads to say what went wrong: no more than the bound of it.
    return new Response(body.pipeThrough(truncated(bound.maxMessageBytes)), like);
  };
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * An event stream (WHATWG HTML, server-sent events) passed on event by event: the bytes of
 * each event, up to and including the blank line that ends it, leave together once it has
 * ended. An event longer than the bound (its bytes as they came, field names and line ends
 * included) is dropped, never held whole.
 */
export function eventsWithin(bound: ResponseBound): TransformStream<Uint8Array, Uint8Array> {
  const events = new EventSplitter(bound);
  return new TransformStream({
    transform: (chunk, controller) => events.push(chunk, (part) => controller.enqueue(part)),
    flush: (controller) => events.end((part) => controller.enqueue(part)),
  });
}

class EventSplitter {
  /** The current event's bytes so far, while it is within the bound. */
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  /** The current event's bytes counted once it went over the bound; undefined while within it. */
  private dropped: number | undefined;
  /** Bytes of the current line so far, its end not yet seen. */
  private lineBytes = 0;
  /** The last byte seen ended a line with a CR: an LF next is part of that line end. */
  private afterCr = false;
  /** The event ended with a CR at the end of the last chunk: an LF first in the next is its last byte. */
  private endsAfterCr = false;

  constructor(private readonly bound: ResponseBound) {}

  push(chunk: Uint8Array, emit: (part: Uint8Array) => void): void {
    if (chunk.length === 0) return;
    let from = 0;
    let at = 0;
    if (this.endsAfterCr) {
      this.endsAfterCr = false;
      this.afterCr = false;
      if (chunk[0] === LF) from = at = 1;
      this.ended(chunk.subarray(0, from), emit);
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
      this.ended(chunk.subarray(from, at), emit);
      from = at;
    }
    if (from < chunk.length) this.hold(chunk.subarray(from));
  }

  private hold(part: Uint8Array): void {
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
  private ended(last: Uint8Array, emit: (part: Uint8Array) => void): void {
    this.hold(last);
    if (this.dropped !== undefined) this.bound.onOversize(this.dropped);
    else for (const part of this.held) emit(part);
    this.held = [];
    this.heldBytes = 0;
    this.dropped = undefined;
  }

  /** The stream ended: an event whose CR was the last byte ends; one never ended is dropped, as a parser would. */
  end(emit: (part: Uint8Array) => void): void {
    if (this.endsAfterCr) this.ended(new Uint8Array(0), emit);
    this.endsAfterCr = false;
  }
}

/**
 * A JSON body: its bytes when they are within the bound; past it, counted to the end and
 * dropped, and the body is an empty batch, `[]`, which answers nothing.
 */
async function jsonWithin(body: ReadableStream<Uint8Array>, bound: ResponseBound): Promise<ReadableStream<Uint8Array>> {
  const parts: Uint8Array[] = [];
  let bytes = 0;
  const reader = body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    bytes += read.value.length;
    if (bytes <= bound.maxMessageBytes) parts.push(read.value);
    else parts.length = 0;
  }
  if (bytes > bound.maxMessageBytes) {
    bound.onOversize(bytes);
    parts.push(EMPTY_BATCH);
  }
  return new ReadableStream({
    start: (controller) => {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

const EMPTY_BATCH = new TextEncoder().encode("[]");

/** The first `max` bytes of a body; the rest is read and let go. */
function truncated(max: number): TransformStream<Uint8Array, Uint8Array> {
  let left = max;
  return new TransformStream({
    transform: (chunk, controller) => {
      if (left <= 0) return;
      const part = chunk.length <= left ? chunk : chunk.subarray(0, left);
      left -= part.length;
      controller.enqueue(part);
    },
  });
}
