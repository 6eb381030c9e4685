import type { CheckPool, SignatureBatch } from "@aegis/format/browser";
import type { HashedSpan } from "./hashes-ahead.js";
import type { Backend, WorkerAnswer, WorkerRequest } from "./signature-messages.js";

/**
 * The page's signature workers: Web Workers made from the worker script the page carries
 * (a page opened from disk may not load a script file, but may run one made from text).
 * What `@aegis/format` sends its deferred checks to, as Node's worker threads.
 */
export class WorkerPool implements CheckPool {
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

  /** The LineHashes of the whole rows in `bytes`, which begin at byte `base` of the record (the bytes are copied to the worker). */
  hash(base: number, bytes: Uint8Array): Promise<HashedSpan> {
    const worker = this.leastLoaded();
    if (worker === undefined) return Promise.reject(new Error("no signature worker"));
    return worker.hash(this.nextId++, base, bytes);
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
  private readonly hashing = new Map<number, { resolve: (span: HashedSpan) => void; reject: (error: Error) => void }>();
  backend: Backend | undefined;
  readonly readiness: Promise<Backend>;

  constructor(url: string, wanted: Backend | "auto") {
    this.worker = new Worker(url);
    let ready: (backend: Backend) => void = () => undefined;
    this.readiness = new Promise((resolve) => (ready = resolve));
    this.worker.onmessage = (event: MessageEvent<WorkerAnswer>) => {
      const answer = event.data;
      if (answer.code === "valid") return;
      if (answer.code === "hashed") {
        this.hashing.get(answer.id)?.resolve(answer);
        this.hashing.delete(answer.id);
        return;
      }
      if (answer.code === "ready") {
        this.backend = answer.backend;
        ready(answer.backend);
        return;
      }
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (answer.code === "checked") waiting?.resolve(answer.failed);
      else waiting?.reject(new Error(`a signature worker failed: ${answer.message}`));
    };
    this.worker.onerror = (event) => {
      const error = new Error(`a signature worker failed: ${event.message}`);
      for (const waiting of [...this.pending.values(), ...this.hashing.values()]) waiting.reject(error);
      this.pending.clear();
      this.hashing.clear();
    };
    this.post({ code: "hello", backend: wanted });
  }

  get load(): number {
    return this.pending.size + this.hashing.size;
  }

  hash(id: number, base: number, bytes: Uint8Array): Promise<HashedSpan> {
    return new Promise((resolve, reject) => {
      this.hashing.set(id, { resolve, reject });
      const copy = bytes.slice();
      this.worker.postMessage({ code: "hash", id, base, bytes: copy } satisfies WorkerRequest, [copy.buffer]);
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
