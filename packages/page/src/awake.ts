/**
 * `chromium --headless --dump-dom` (or `--screenshot`) with `--virtual-time-budget` runs the
 * page on virtual time: whenever its main thread has nothing to do, the clock jumps to the
 * next timer, or to the end of the budget, and the DOM is taken then. Waiting for the
 * workers leaves the main thread with nothing to do, so such a run took the page while it
 * still said "Verifying… 100%". While verifying, a headless browser that nothing drives
 * keeps its main thread busy with empty tasks (no timer: those would let the clock run), so
 * that virtual time waits for the verdict.
 *
 * Only there: in a browser a person uses, or one a test or the bench drives (which sets
 * `navigator.webdriver`, and reads the page when it is ready), the main thread stays idle
 * while the workers check, and the cores are theirs.
 */
export function keepAwakeWhile<T>(work: Promise<T>): Promise<T> {
  if (!unattendedHeadless()) return work;
  const channel = new MessageChannel();
  let busy = true;
  channel.port1.onmessage = () => {
    if (busy) channel.port2.postMessage(null);
  };
  channel.port2.postMessage(null);
  const stop = (): void => {
    busy = false;
    channel.port1.close();
  };
  work.then(stop, stop);
  return work;
}

function unattendedHeadless(): boolean {
  return !navigator.webdriver && /\bHeadlessChrome\//.test(navigator.userAgent);
}
