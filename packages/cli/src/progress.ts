import type { Writable } from "node:stream";

/**
 * Progress for long work, on stderr and only when stderr is a terminal: a 1 GB file must
 * not look hung, and a pipe or a CI log must get none of it. stdout is never touched.
 */
export class Progress {
  private shown = false;
  private readonly started = Date.now();
  /**
   * Ctrl-C while the line shows must not leave it on the terminal under the shell's prompt:
   * clear it, then die of the same signal, so the exit status still says which (130 for SIGINT).
   */
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.finish();
    process.kill(process.pid, signal);
  };

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
    // The handlers go in before the first byte: a Ctrl-C pressed the moment the line appears
    // would otherwise meet the default disposition and kill us with the line still showing.
    if (!this.shown) for (const signal of SIGNALS) process.once(signal, this.onSignal);
    this.shown = true;
    this.stream.write(`\r${this.label}: ${mib(done)} of ${mib(this.total)} (${percent}%)`);
  }

  finish(): void {
    if (!this.shown) return;
    this.stream.write("\r\u001b[2K");
    this.shown = false;
    for (const signal of SIGNALS) process.removeListener(signal, this.onSignal);
  }
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function mib(bytes: number): string {
  return bytes >= 1 << 30 ? `${(bytes / (1 << 30)).toFixed(2)} GiB` : `${(bytes / (1 << 20)).toFixed(0)} MiB`;
}
