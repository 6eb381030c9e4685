import type { Writable } from "node:stream";

/**
 * Progress for long work, on stderr and only when stderr is a terminal: a 1 GB file must
 * not look hung, and a pipe or a CI log must get none of it. stdout is never touched.
 */
export class Progress {
  private shown = false;
  private readonly started = Date.now();

  constructor(
    private readonly stream: Writable & { isTTY?: boolean },
    private readonly label: string,
    private readonly total: number,
  ) {}

  get enabled(): boolean {
    return this.stream.isTTY === true && this.total >= 1 << 24;
  }

  update(done: number): void {
    if (!this.enabled || Date.now() - this.started < 250) return;
    const percent = this.total === 0 ? 100 : Math.min(100, Math.floor((done / this.total) * 100));
    this.stream.write(`\r${this.label}: ${mib(done)} of ${mib(this.total)} (${percent}%)`);
    this.shown = true;
  }

  finish(): void {
    if (this.shown) this.stream.write("\r\u001b[2K");
  }
}

function mib(bytes: number): string {
  return bytes >= 1 << 30 ? `${(bytes / (1 << 30)).toFixed(2)} GiB` : `${(bytes / (1 << 20)).toFixed(0)} MiB`;
}
