import { asError } from "@aegis/format/internal";

/**
 * What wrap has opened, as a stack: each resource is pushed with its close as it is opened,
 * and closed last-opened-first, on a failed start or at the end (ADR 0029). Node 20 has no
 * `AsyncDisposableStack`; this is the little of it wrap needs.
 */
export class Resources {
  private readonly stack: (() => Promise<void>)[] = [];

  /**
   * Push the close of what was just opened. The function returned closes it now, once: a
   * resource whose close must come before the others' (the record's) is closed early, and
   * {@link closeAll} skips it then.
   */
  push(close: () => void | Promise<void>): () => Promise<void> {
    let closing: Promise<void> | undefined;
    const once = (): Promise<void> => (closing ??= Promise.resolve().then(close));
    this.stack.push(once);
    return once;
  }

  /**
   * Close everything, last opened first. Every close runs, whatever the others did; the
   * first failure is resolved with (undefined when there was none), never thrown.
   */
  async closeAll(): Promise<Error | undefined> {
    let first: Error | undefined;
    for (let close = this.stack.pop(); close !== undefined; close = this.stack.pop()) {
      try {
        await close();
      } catch (error) {
        first ??= asError(error);
      }
    }
    return first;
  }
}
