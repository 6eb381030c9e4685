import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Which stream a spooled text is for. */
export type SpoolStream = "out" | "err";

/**
 * Output made before it may be printed: recheck reads a record once, verifying it while it
 * rechecks, but prints the verdict first. Texts are held in memory up to a bound, then in a
 * private temporary file, so a month of calls does not grow the heap; they come back in the
 * order they were added, each for its stream.
 */
export class Spool {
  private memory: { readonly stream: SpoolStream; readonly text: string }[] = [];
  private memoryChars = 0;
  private file: { readonly dir: string; readonly fd: number } | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Once a text has gone to the file, every later one follows it there, to keep the order. */
  private spilled = false;

  constructor(private readonly memoryLimit = 8 << 20) {}

  add(stream: SpoolStream, text: string): void {
    if (!this.spilled && this.memoryChars + text.length <= this.memoryLimit) {
      this.memory.push({ stream, text });
      this.memoryChars += text.length;
      return;
    }
    this.spilled = true;
    const body = Buffer.from(text, "utf8");
    const head = Buffer.alloc(5);
    head[0] = stream === "out" ? 0 : 1;
    head.writeUInt32LE(body.length, 1);
    this.pending.push(head, body);
    this.pendingBytes += 5 + body.length;
    if (this.pendingBytes >= 1 << 20) this.flush();
  }

  /** Every text, in order, once: call it after the last `add`. */
  async replay(write: (stream: SpoolStream, text: string) => Promise<void> | void): Promise<void> {
    const memory = this.memory;
    this.memory = [];
    this.memoryChars = 0;
    for (const { stream, text } of memory) await write(stream, text);
    this.flush();
    if (this.file === undefined) return;
    const chunk = Buffer.alloc(1 << 20);
    let carry = Buffer.alloc(0);
    let position = 0;
    for (;;) {
      const read = readSync(this.file.fd, chunk, 0, chunk.length, position);
      if (read === 0) break;
      position += read;
      let data = carry.length === 0 ? chunk.subarray(0, read) : Buffer.concat([carry, chunk.subarray(0, read)]);
      while (data.length >= 5) {
        const length = data.readUInt32LE(1);
        if (data.length < 5 + length) break;
        await write(data[0] === 0 ? "out" : "err", data.toString("utf8", 5, 5 + length));
        data = data.subarray(5 + length);
      }
      carry = Buffer.from(data);
    }
  }

  /** Removes the temporary file, if one was made. */
  dispose(): void {
    if (this.file === undefined) return;
    closeSync(this.file.fd);
    rmSync(this.file.dir, { recursive: true, force: true });
    this.file = undefined;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    if (this.file === undefined) {
      const dir = mkdtempSync(join(tmpdir(), "aegis-spool-"));
      this.file = { dir, fd: openSync(join(dir, "spool"), "w+", 0o600) };
    }
    const bytes = Buffer.concat(this.pending);
    let written = 0;
    while (written < bytes.length) written += writeSync(this.file.fd, bytes, written);
    this.pending = [];
    this.pendingBytes = 0;
  }
}
