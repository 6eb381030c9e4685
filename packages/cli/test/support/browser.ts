import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { finishedAtLeast, verdictNow } from "../in-page/probes.js";

/**
 * Headless Chromium from Debian's `chromium` package (`.ci/run` installs it), driven by
 * playwright-core. Without it the browser tests fail, never skip: a page that verifies
 * records is not tested by a run that leaves them out (AEGIS_CHROMIUM names another binary).
 */
export const CHROMIUM = process.env["AEGIS_CHROMIUM"] ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: the browser tests of aegis report need it (apt-get install chromium, or run .ci/run, which installs it; AEGIS_CHROMIUM names another binary)`,
    );
  // --no-sandbox: CI runs as root, where Chromium's sandbox will not start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
}

/** What a page said about the record it verified: its state, verdict and `aegis verify --json` document. */
export interface PageVerdict {
  readonly state: string;
  readonly verdict: string | undefined;
  readonly json: Record<string, unknown> | undefined;
  readonly banner: string;
}

/** Waits until the page has finished with its `count`-th record (a test may drop several on one page). */
export async function pageVerdict(page: Page, count = 1): Promise<PageVerdict> {
  await page.waitForFunction(finishedAtLeast, count, { timeout: 120_000 });
  return page.evaluate(verdictNow);
}

/** Every request a page makes that is not for its own file or a blob it made: there should be none. */
export function watchRequests(page: Page): string[] {
  const outside: string[] = [];
  page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith("file:") && !url.startsWith("blob:") && !url.startsWith("data:")) outside.push(url);
  });
  return outside;
}

/** How many verifications the drop page has been asked for (a file chosen, keys pasted after one). */
export async function asked(page: Page): Promise<number> {
  return Number(await page.evaluate(() => document.body.dataset["asked"] ?? "0"));
}
