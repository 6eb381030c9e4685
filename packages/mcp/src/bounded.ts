/**
 * Bounded waits (SPEC §17.7: no wait is unbounded). Their timers hold the process open: a
 * wait that must end before wrap exits cannot be skipped by an event loop that empties first
 * (an unreferenced timer let Node end wrap with 13, an unsettled top-level await, while the
 * rest of a server's process group was still being reaped). Each timer is cleared as soon as
 * the wait is over, so a wait that ends early keeps nothing open.
 */

/** Whether `promise` settled within `ms`: `true` if it did, `false` if the time ran out first. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true as const,
        () => true as const,
      ),
      timeUp,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Wait `ms`, holding the process open meanwhile. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
