import type { CheckPool, PieceReader, SignatureBatch } from "@aegis/format/browser";
import type { PieceReply } from "./record-pieces.js";
import type { Backend, WorkerAnswer, WorkerRequest } from "./signature-messages.js";

/**
 * The page's signature workers: Web Workers made from the worker script the page carries
 * (a page opened from disk may not load a script file, but may run one made from text).
 * What `@aegis/format` sends its deferred checks to, as Node's worker threads.
 */
export class WorkerPool implements CheckPool, PieceReader {
  private readonly workers: PageWorker[] = [];
  private nextId = 0;

  constructor(
    private readonly source: string,
    readonly size: number,
    private readonly backend: Backend | "auto",
  ) {}

  /** The back end the workers chose, once they are ready. */
  get chosen(): Backend | undefined {
    return this.workers[0]?.backend;
  }

  get ready(): boolean {
    return this.workers.length > 0 && this.workers.every((w) => w.backend !== undefined);
  }

  start(): void {
    if (this.workers.length > 0) return;
    const url = URL.createObjectURL(new Blob([this.source], { type: "text/javascript" }));
    for (let i = 0; i < this.size; i++) this.workers.push(new PageWorker(url, this.backend));
  }

  /** Resolves once every worker has chosen its back end. */
  async whenReady(): Promise<Backend> {
    this.start();
    const chosen = await Promise.all(this.workers.map((w) => w.readiness));
    return chosen.includes("noble") ? "noble" : "webcrypto";
  }

  check(batch: SignatureBatch): Promise<number> {
    const worker = this.leastLoaded();
    if (worker === undefined) return Promise.reject(new Error("no signature worker"));
    return worker.send(this.nextId++, batch);
  }

  /**
   * Read the whole rows in the first `length` bytes of `bytes` (handed over to the worker, and
   * back), `budget` of them at most, checking signatures under `hint` until an `open` names
   * another key.
   */
  read({ bytes, length, limit, hint, budget }: Parameters<PieceReader["read"]>[0]): Promise<PieceReply> {
    const worker = this.leastLoaded();
    if (worker === undefined) return Promise.reject(new Error("no signature worker"));
    return worker.read(this.nextId++, bytes, length, limit, hint, budget);
  }

  private leastLoaded(): PageWorker | undefined {
    this.start();
    let worker = this.workers[0];
    for (const w of this.workers) if (worker === undefined || w.load < worker.load) worker = w;
    return worker;
  }

  close(): void {
    for (const w of this.workers) w.terminate();
    this.workers.length = 0;
  }
}

class PageWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (failed: number) => void; reject: (error: Error) => void }>();
  private readonly reading = new Map<number, { resolve: (reply: PieceReply) => void; reject: (error: Error) => void }>();
  backend: Backend | undefined;
  readonly readiness: Promise<Backend>;

  constructor(url: string, wanted: Backend | "auto") {
    this.worker = new Worker(url);
    let ready: (backend: Backend) => void = () => undefined;
    this.readiness = new Promise((resolve) => (ready = resolve));
    this.worker.onmessage = (event: MessageEvent<WorkerAnswer>) => {
      const answer = event.data;
      if (answer.code === "valid") return;
      if (answer.code === "read") {
        this.reading.get(answer.id)?.resolve(answer);
        this.reading.delete(answer.id);
        return;
      }
      if (answer.code === "ready") {
        this.backend = answer.backend;
        ready(answer.backend);
        return;
      }
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (answer.code === "checked") {
        waiting?.resolve(answer.failed);
        return;
      }
      const error = new Error(`a worker of this page failed: ${answer.message}`);
      waiting?.reject(error);
      this.reading.get(answer.id)?.reject(error);
      this.reading.delete(answer.id);
    };
    this.worker.onerror = (event) => {
      const error = new Error(`a signature worker failed: ${event.message}`);
      for (const waiting of [...this.pending.values(), ...this.reading.values()]) waiting.reject(error);
      this.pending.clear();
      this.reading.clear();
    };
    this.post({ code: "hello", backend: wanted });
  }

  get load(): number {
    return this.pending.size + this.reading.size;
  }

  read(id: number, bytes: ArrayBuffer, length: number, limit: number, hint: string | undefined, budget: number): Promise<PieceReply> {
    return new Promise((resolve, reject) => {
      this.reading.set(id, { resolve, reject });
      this.worker.postMessage({ code: "piece", id, bytes, length, limit, hint, budget } satisfies WorkerRequest, [bytes]);
    });
  }

  send(id: number, batch: SignatureBatch): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const encoded = batch.encode();
      this.worker.postMessage({ code: "batch", id, batch: encoded } satisfies WorkerRequest, [encoded.bytes]);
    });
  }

  terminate(): void {
    this.worker.terminate();
  }

  private post(request: WorkerRequest): void {
    this.worker.postMessage(request);
  }
}
