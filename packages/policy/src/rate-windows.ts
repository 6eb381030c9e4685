import type { RateSpec } from "./model.js";

/**
 * Live rate-limit state (SPEC §15.6): one fixed window per (rule, tool, session), as the
 * reference keeps them. The caller owns the object and decides its lifetime: one per
 * process, one per proxy, one per test. Nothing else in this package holds state.
 *
 * A window opens at the first call it counts and lasts `per_seconds`; within it at most
 * `max` calls are admitted. Times are milliseconds on a clock the caller chooses
 * (`performance.now()` by default in `decide`, which does not go backwards). Windows that
 * have closed are dropped from time to time, so a proxy that sees many sessions does not
 * keep one window per session for ever.
 */
export class RateWindows {
  private readonly windows = new Map<string, { readonly closesAt: number; count: number }>();
  private admitsUntilSweep = 1024;

  /** Count one call against the window for `key`; false when the window is full. */
  admit(key: string, spec: RateSpec, now: number): boolean {
    this.sweep(now);
    let window = this.windows.get(key);
    if (window === undefined || now >= window.closesAt) {
      window = { closesAt: now + Number(spec.per_seconds) * 1000, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count >= spec.max) return false;
    window.count++;
    return true;
  }

  /** How many windows are held. */
  get size(): number {
    return this.windows.size;
  }

  /**
   * Drop closed windows, after as many admits as there were windows left by the last sweep
   * (at least 1024): each sweep's cost is paid for by the admits before it.
   */
  private sweep(now: number): void {
    if (--this.admitsUntilSweep > 0) return;
    for (const [key, window] of this.windows) if (now >= window.closesAt) this.windows.delete(key);
    this.admitsUntilSweep = Math.max(this.windows.size, 1024);
  }
}
