import type { Transferable, Worker, WorkerOptions } from "node:worker_threads";
import { startWorker, type VerifyWorker } from "./worker-url.js";

/** A message to or from a pool's thread: its answer comes back under the id it was sent with. */
interface Numbered {
  readonly id: number;
}

/** How a pool starts its threads. */
export interface WorkerPoolOptions {
  /** Each thread's heap bounds. */
  readonly resourceLimits?: WorkerOptions["resourceLimits"];
  /**
   * Start a thread only when every running one is busy, up to the pool's size, instead of all
   * of them with the first message: for work that comes a whole file at a time.
   */
  readonly grow?: boolean;
}

/**
 * The verifier's worker threads of one kind (worker-url.ts): a message goes to the least
 * loaded thread and its answer resolves the promise it was sent with. Threads start with the
 * first message, stay for the next verification (a fleet's files are verified one after
 * another), and never keep the process alive while idle. A thread that fails or exits with
 * messages outstanding rejects them and closes the pool; the next message starts afresh.
 */
export class WorkerPool<Request extends Numbered, Reply extends Numbered> {
  private threads: PoolThread<Request, Reply>[] = [];
  private nextId = 0;

  constructor(
    private readonly kind: VerifyWorker,
    readonly size: number,
    private readonly options: WorkerPoolOptions = {},
  ) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`a ${kind} pool has at least one thread, got ${size}`);
  }

  /** True once threads have been started (by an earlier verification, or this one). */
  get running(): boolean {
    return this.threads.length > 0;
  }

  /** True once every thread runs and can take a message at once. */
  get ready(): boolean {
    return this.threads.length > 0 && this.threads.every((t) => t.online);
  }

  /** Starts the threads, if they are not running; they take tens of milliseconds to be ready. */
  start(): void {
    if (this.threads.length === 0) this.threads = Array.from({ length: this.options.grow === true ? 1 : this.size }, () => this.thread());
  }

  /** Send the message `make` builds around its id to the least loaded thread, handing over `transfer`. */
  send(make: (id: number) => Request, transfer: readonly Transferable[] = []): Promise<Reply> {
    this.start();
    if (this.options.grow === true && this.threads.length < this.size && this.threads.every((t) => t.load > 0)) this.threads.push(this.thread());
    let chosen = this.threads[0];
    for (const t of this.threads) if (chosen === undefined || t.load < chosen.load) chosen = t;
    if (chosen === undefined) throw new Error(`the ${this.kind} pool has no thread`);
    return chosen.send(make(this.nextId++), transfer);
  }

  /** Stops every thread; a later message starts new ones. */
  async close(): Promise<void> {
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((t) => t.stop()));
  }

  private thread(): PoolThread<Request, Reply> {
    const limits = this.options.resourceLimits;
    const worker = startWorker(this.kind, limits === undefined ? {} : { resourceLimits: limits });
    return new PoolThread<Request, Reply>(worker, this.kind, () => void this.close());
  }
}

class PoolThread<Request extends Numbered, Reply extends Numbered> {
  private readonly pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: unknown) => void }>();
  online = false;

  constructor(
    private readonly worker: Worker,
    kind: VerifyWorker,
    onFailure: () => void,
  ) {
    worker.once("online", () => {
      this.online = true;
    });
    worker.on("message", (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      waiting?.resolve(reply);
    });
    const fail = (error: unknown): void => {
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
      onFailure();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => {
      if (this.pending.size > 0) fail(new Error(`a ${kind} thread exited (code ${code}) with work outstanding`));
    });
    // After the listeners: adding a "message" listener refs the worker again.
    worker.unref();
  }

  get load(): number {
    return this.pending.size;
  }

  send(request: Request, transfer: readonly Transferable[]): Promise<Reply> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(request.id, { resolve, reject });
      this.worker.postMessage(request, transfer);
    });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
