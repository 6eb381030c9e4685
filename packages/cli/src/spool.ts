import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Which stream a spooled text is for. */
export type SpoolStream = "out" | "err";

/** Texts in a row for one stream are joined up to this many characters: a write per run, not per line. */
const RUN = 1 << 16;

/**
 * Output made before it may be printed: recheck reads a record once, verifying it while it
 * rechecks, but prints the verdict first. Texts are held in memory up to a bound, then in a
 * private temporary file, so a month of calls does not grow the heap; they come back in the
 * order they were added, each for its stream, consecutive texts for one stream joined.
 */
export class Spool {
  /**
   * Held as UTF-8 bytes, not strings: a text made from a parsed Line is a rope whose parts
   * are slices of that Line's row, and keeping the text would keep every row it came from
   * (a million-call recheck held 250 MB more than its spool).
   */
  private memory: { readonly stream: SpoolStream; readonly bytes: Buffer }[] = [];
  private memoryBytes = 0;
  private file: { readonly dir: string; readonly fd: number } | undefined;
  /** Once a text has gone to the file, every later one follows it there, to keep the order. */
  private spilled = false;
  private runStream: SpoolStream = "out";
  private runText = "";

  constructor(private readonly memoryLimit = 8 << 20) {}

  add(stream: SpoolStream, text: string): void {
    if (stream !== this.runStream || this.runText.length >= RUN) this.endRun();
    this.runStream = stream;
    this.runText += text;
  }

  /** Every text, in order, once: call it after the last `add`. */
  async replay(write: (stream: SpoolStream, text: string) => Promise<void> | void): Promise<void> {
    this.endRun();
    const memory = this.memory;
    this.memory = [];
    this.memoryBytes = 0;
    for (const { stream, bytes } of memory) await write(stream, bytes.toString("utf8"));
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

  private endRun(): void {
    const text = this.runText;
    if (text.length === 0) return;
    this.runText = "";
    const stream = this.runStream;
    const body = Buffer.from(text, "utf8");
    if (!this.spilled && this.memoryBytes + body.length <= this.memoryLimit) {
      this.memory.push({ stream, bytes: body });
      this.memoryBytes += body.length;
      return;
    }
    this.spilled = true;
    if (this.file === undefined) {
      const dir = mkdtempSync(join(tmpdir(), "aegis-spool-"));
      this.file = { dir, fd: openSync(join(dir, "spool"), "w+", 0o600) };
    }
    const head = Buffer.alloc(5);
    head[0] = stream === "out" ? 0 : 1;
    head.writeUInt32LE(body.length, 1);
    writeAll(this.file.fd, head);
    writeAll(this.file.fd, body);
  }
}

function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written);
}
