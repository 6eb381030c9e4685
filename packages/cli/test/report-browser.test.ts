import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeUnfinishedCalls, verifyJson } from "../src/verify-view.js";
import { ROOT, aegis, vector } from "./support.js";
import { ed25519InWorker, fileTransfer, verdictNow } from "./in-page/probes.js";
import { asked, launchChromium, pageVerdict, watchRequests } from "./support/browser.js";
import { verifyRecord } from "@aegis/format";

interface ManifestVector {
  readonly id: string;
  readonly kind: string;
  readonly input: Record<string, unknown>;
  readonly expected: Record<string, unknown>;
}
const manifest = JSON.parse(readFileSync(vector("manifest.json"), "utf8")) as { vectors: ManifestVector[] };
const chains = manifest.vectors.filter((v) => v.kind === "chain");
const ed25519 = manifest.vectors.filter((v) => v.kind === "ed25519");

/** Pictures of the pages, for a person to look at (git-ignored). */
const SCREENSHOTS = join(ROOT, "screenshots");

const work = mkdtempSync(join(tmpdir(), "aegis-report-browser-"));
describe("aegis report in headless Chromium", () => {
  let browser: Browser;
  const blank = join(work, "verify.html");
  const demo = join(work, "demo");

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    expect(aegis(["report", "--blank", "--out", blank]).status).toBe(0);
    expect(aegis(["demo", "--out", demo]).status).toBe(0);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  interface Opened {
    readonly page: Page;
    /** Requests beyond the page's file and its own blobs: the page must make none. */
    readonly outside: string[];
    /** Errors thrown in the page. */
    readonly errors: string[];
  }

  async function open(file: string, hash = ""): Promise<Opened> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const outside = watchRequests(page);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${pathToFileURL(file).href}${hash}`);
    return { page, outside, errors };
  }

  async function closeClean(opened: Opened): Promise<void> {
    expect(opened.errors, "errors thrown in the page").toEqual([]);
    expect(opened.outside, "requests to the network").toEqual([]);
    await opened.page.close();
  }

  // A page is pinned to the keys it is given, or unpinned; "pinned to no key" is an empty
  // trust store, which `aegis report` refuses (as it is no list of keys to show).
  const droppable = chains.filter((v) => !(Array.isArray(v.input["trust"]) && v.input["trust"].length === 0));

  for (const backend of ["webcrypto", "noble"] as const) {
    it(`the drop page gives every chain vector the verdict, reason and position of aegis verify --json (${backend})`, async () => {
      // Each row read in a worker and linked on the main thread (issue 31's split, adr/0028),
      // its signature checked by either back end.
      const opened = await open(blank, backend === "noble" ? "#backend=noble" : "");
      const { page } = opened;
      for (const v of droppable) {
        const path = vector(String(v.input["record"]));
        const trust = Array.isArray(v.input["trust"]) ? (v.input["trust"] as string[]) : undefined;
        // New keys verify the file chosen before again (issue 31): wait for what was asked.
        await page.fill("#drop-keys", (trust ?? []).join("\n"));
        await page.setInputFiles("#drop-file", path);
        const shown = await pageVerdict(page, await asked(page));
        const verification = await verifyRecord({ path }, trust === undefined ? {} : { trust });
        const want = verifyJson(verification, trust !== undefined);
        expect(shown.json, v.id).toEqual(want);
        expect(shown.verdict, v.id).toBe(v.expected["verdict"]);
        expect(shown.banner, v.id).toContain(String(v.expected["text"]));
        // SPEC §13.4: calls an ended Session left unfinished are a fact of the banner.
        const unfinished = summarizeUnfinishedCalls(verification.unfinished_calls);
        if (unfinished === undefined) expect(shown.banner, v.id).not.toContain("never finished");
        else expect(shown.banner, v.id).toContain(unfinished);
      }
      expect((await page.evaluate(verdictNow)).banner).toMatch(backend === "noble" ? /@noble\/ed25519/ : /WebCrypto/);
      await closeClean(opened);
    });
  }

  it("each signature back end of the page gives every Ed25519 vector its expected answer", async () => {
    const opened = await open(blank);
    const { page } = opened;
    const cases = ed25519.map((v) => ({
      id: v.id,
      valid: v.expected["valid"] === true,
      ...(JSON.parse(readFileSync(vector(String(v.input["case"])), "utf8")) as { public_key: string; message: string; signature: string }),
    }));
    for (const backend of ["webcrypto", "noble"] as const) {
      const answers = await page.evaluate(ed25519InWorker, { cases, backend: backend === "noble" ? ("noble" as const) : ("auto" as const) });
      expect(answers.backend).toBe(backend);
      expect(answers.found).toEqual(Object.fromEntries(cases.map((c) => [c.id, c.valid])));
    }
    await closeClean(opened);
  });

  it("a report of the demo shows its six calls with their decisions, and what was computed when it was written", async () => {
    const key = readFileSync(join(demo, "signing.pub"), "utf8").trim().split("\n").at(-1) ?? ""; // SPEC §13.6: the header, then the key
    const out = join(work, "demo.html");
    const made = aegis([
      "report",
      "--key",
      key,
      "--policy",
      join(demo, "policy-stricter.yaml"),
      "--envelope",
      join(demo, "session.envelope"),
      "--checkpoint",
      join(demo, "session.checkpoint"),
      "--out",
      out,
      join(demo, "session.aarl"),
    ]);
    expect(made.stderr).toBe(
      `record: Verified (pinned to ${aegis(["verify", "--json", "--key", key, join(demo, "session.aarl")]).stdout.match(/"key_ids": \[\s*"([0-9a-f]{64})"/)?.[1]})\n`,
    );
    expect(made.status).toBe(0);
    const opened = await open(out);
    const { page } = opened;
    const shown = await pageVerdict(page);
    expect(shown.verdict).toBe("verified");
    expect(shown.json).toEqual(JSON.parse(aegis(["verify", "--json", "--key", key, join(demo, "session.aarl")]).stdout));
    const calls = await page.$$eval(".grid-body .is-call", (rows) =>
      rows.map((r) => ({ call: r.querySelector(".cell-what")?.textContent, decision: r.querySelector(".cell-decision")?.textContent })),
    );
    expect(calls.map((c) => c.call)).toEqual(["call-1", "call-2", "call-3", "call-4", "call-5", "call-6"]);
    expect(calls.map((c) => c.decision?.split(/[ :]/)[0])).toEqual(["allowed", "denied", "denied", "parked", "allowed", "allowed"]);
    expect(shown.banner).toMatch(/Recheck\*\s+under policy-stricter\.yaml/);
    expect(shown.banner).toMatch(/Checkpoints\*\s+Verified/);
    expect(shown.banner).toMatch(/Envelope\*\s+session\.envelope: \d+ present/);
    // The details of call-4: its park and the approval that answered it, the bytes on demand.
    await page.click(".grid-body .is-parked");
    const details = page.locator("#details");
    await expect.poll(() => details.innerText()).toMatch(/Call call-4/);
    await details.getByRole("button", { name: /request bytes/i }).click();
    expect(await details.innerText()).toMatch(/Hashed in this browser: [0-9a-f]{64}, the digest the record names\./);
    // Filters: denied calls only, then one call by id.
    await page.selectOption("#filter-kind", "denied");
    expect(await page.locator("#row-count").innerText()).toBe("2 of 9 rows");
    await page.selectOption("#filter-kind", "all");
    await page.fill("#search-call", "call-6");
    expect(await page.locator("#row-count").innerText()).toBe("1 of 9 rows");
    await page.fill("#search-call", "");
    // The path and host filters read as `aegis show --path` and `--host` do: whole components.
    await page.fill("#filter-path", "/workspace");
    expect(await page.locator("#row-count").innerText()).toBe("2 of 9 rows");
    await page.fill("#filter-path", "/etc/");
    expect(await page.locator("#row-count").innerText()).toBe("1 of 9 rows");
    expect(await page.locator(".grid-body .cell-what").allInnerTexts()).toEqual(["call-2"]);
    await page.fill("#filter-path", "/et");
    expect(await page.locator("#row-count").innerText()).toBe("0 of 9 rows");
    await page.fill("#filter-path", "workspace");
    expect(await page.locator("#row-count").innerText()).toBe("0 of 9 rows");
    expect(await page.locator("#filter-path-problem").innerText()).toMatch(/^Path: a path must be absolute/);
    await page.fill("#filter-path", "");
    await page.fill("#filter-host", "PASTE.example.net");
    expect(await page.locator(".grid-body .cell-what").allInnerTexts()).toEqual(["call-3"]);
    await page.fill("#filter-host", "paste.example.net:80");
    expect(await page.locator("#row-count").innerText()).toBe("0 of 9 rows");
    await page.fill("#filter-host", "");
    expect(await page.locator("#row-count").innerText()).toBe("9 rows");
    await page.screenshot({ path: join(SCREENSHOTS, "demo-report.png"), fullPage: true });
    await closeClean(opened);
  });

  it("no cell cuts its text at 1400 or 800 px: cells wrap and rows grow; a recheck's newly_blocked stands out", async () => {
    const key = readFileSync(join(demo, "signing.pub"), "utf8").trim().split("\n").at(-1) ?? ""; // SPEC §13.6: the header, then the key
    const out = join(work, "wrapped.html");
    const args = ["report", "--key", key, "--policy", join(demo, "policy-stricter.yaml"), "--envelope", join(demo, "session.envelope"), "--out", out];
    expect(aegis([...args, join(demo, "session.aarl")]).status).toBe(0);
    for (const width of [1400, 800]) {
      const page = await browser.newPage({ viewport: { width, height: 1000 } });
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(pathToFileURL(out).href);
      expect((await pageVerdict(page)).verdict).toBe("verified");
      const clipped = await page.$$eval(".grid .cell", (cells) =>
        cells.filter((c) => c.scrollWidth > c.clientWidth + 1 || c.scrollHeight > c.clientHeight + 1).map((c) => `${c.className}: ${c.textContent}`),
      );
      expect(clipped, `at ${width} px`).toEqual([]);
      // Rows that grew push the rows below them down: none overlaps the next.
      const boxes = await page.$$eval(".grid-body .grid-row", (rows) => rows.map((r) => r.getBoundingClientRect()).map((b) => [b.top, b.bottom] as const));
      expect(boxes.length).toBe(9);
      for (let i = 1; i < boxes.length; i++) expect(boxes[i]?.[0], `row ${i} at ${width} px`).toBeGreaterThanOrEqual((boxes[i - 1]?.[1] ?? 0) - 0.5);
      // Every word of a denial is in its cell, and shown.
      const denied = await page.locator(".grid-body .is-denied .cell-decision").first().innerText();
      expect(denied).toBe("denied: no matching rule (default deny)");
      const recheck = await page.$$eval(".grid-body .cell-recheck", (cells) =>
        cells.map((c) => ({ text: c.textContent ?? "", weight: getComputedStyle(c).fontWeight, color: getComputedStyle(c).color })),
      );
      const blocked = recheck.filter((c) => c.text.startsWith("newly_blocked"));
      const unchanged = recheck.filter((c) => c.text.startsWith("unchanged"));
      expect(blocked.length).toBe(2);
      expect(unchanged.length).toBe(4);
      for (const c of blocked) {
        expect(c.weight).toBe("700");
        expect(unchanged.map((u) => u.color)).not.toContain(c.color);
      }
      // The keys move by the rows' real heights, and the active row ends whole in view, under the heading.
      const activeInView = (): Promise<boolean> =>
        page.$eval(".grid-viewport", (viewport) => {
          const row = viewport.querySelector(".grid-body .is-active")?.getBoundingClientRect();
          const heading = viewport.querySelector(".grid-heading")?.getBoundingClientRect();
          const view = viewport.getBoundingClientRect();
          return row !== undefined && heading !== undefined && row.top >= heading.bottom - 1.5 && row.bottom <= view.top + viewport.clientHeight + 1.5;
        });
      await page.focus(".grid");
      for (const key of ["End", "Home", "PageDown", "PageDown", "PageUp", "ArrowDown"]) {
        await page.keyboard.press(key);
        expect(await activeInView(), `${key} at ${width} px`).toBe(true);
      }
      await page.screenshot({ path: join(SCREENSHOTS, `demo-report-${width}.png`), fullPage: true });
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  it("a record with one altered byte shows Tampered at the Line aegis verify names, and the link goes to it", async () => {
    const record = readFileSync(join(demo, "session.aarl"));
    const rows = record.toString("latin1").split("\n");
    // A byte inside the tool name of call-3's intent: the Line still parses, its hash does not.
    const row = rows.findIndex((r) => r.includes('"call_id":"call-3"') && r.includes('"line_type":"intent"'));
    const offset = rows.slice(0, row).reduce((n, r) => n + r.length + 1, 0) + (rows[row]?.indexOf('"net.post"') ?? 0) + 2;
    const altered = Buffer.from(record);
    altered[offset] = "x".charCodeAt(0);
    const path = join(work, "altered.aarl");
    writeFileSync(path, altered);
    const key = readFileSync(join(demo, "signing.pub"), "utf8").trim().split("\n").at(-1) ?? ""; // SPEC §13.6: the header, then the key
    const cli = JSON.parse(aegis(["verify", "--json", "--key", key, path]).stdout) as { verdict: string; position: { session_index: number; seq: number } };
    expect(cli.verdict).toBe("tampered");
    const out = join(work, "altered.html");
    expect(aegis(["report", "--key", key, "--out", out, path]).status).toBe(0);
    const opened = await open(out);
    const { page } = opened;
    const shown = await pageVerdict(page);
    expect(shown.json?.["position"]).toEqual(cli.position);
    expect(shown.banner).toContain(`at session ${cli.position.session_index} seq ${cli.position.seq}`);
    await page.click(".goto");
    // The active row is the call at that position (the altered intent, or the outcome after it
    // that breaks): call-3, whose Line is the row it began on.
    expect(await page.locator(".grid-body .is-active .cell-what").innerText()).toBe("call-3");
    expect(Number(await page.locator(".grid-body .is-active .cell-line").innerText())).toBe(row + 1);
    // The words say what is struck through: the rows from the break on, and the calls whose outcome is there.
    const note = await page.locator("#row-count").innerText();
    const from = Number(/the rows from line (\d+) on, and the calls whose outcome is there/.exec(note)?.[1]);
    expect(from, note).toBeGreaterThan(0);
    const struck = await page.$$eval(".grid-body .is-after-break", (rs) =>
      rs.map((r) => ({ call: r.classList.contains("is-call"), line: Number(r.querySelector(".cell-line")?.textContent) })),
    );
    expect(struck.length).toBeGreaterThan(0);
    for (const row of struck) expect(row.line >= from || row.call, JSON.stringify(row)).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, "tampered-report.png"), fullPage: true });
    await closeClean(opened);
  });

  it("the drop page verifies a file dropped on it, pinned to a key typed in, and refuses a key that is not one", async () => {
    const opened = await open(blank);
    const { page } = opened;
    await page.screenshot({ path: join(SCREENSHOTS, "drop-page.png"), fullPage: true });
    await page.fill("#drop-keys", "not-a-key");
    await page.setInputFiles("#drop-file", join(demo, "session.aarl"));
    expect(await page.locator("#drop-error").innerText()).toMatch(/Not a public key: not-a-key/);
    const key = readFileSync(join(demo, "signing.pub"), "utf8").trim().split("\n").at(-1) ?? ""; // SPEC §13.6: the header, then the key
    await page.fill("#drop-keys", key);
    // A real drop: a DataTransfer holding the file, dispatched as the browser does.
    const transfer = await page.evaluateHandle(fileTransfer, { base64: readFileSync(join(demo, "session.aarl")).toString("base64"), name: "session.aarl" });
    await page.dispatchEvent("#drop", "drop", { dataTransfer: transfer });
    const shown = await pageVerdict(page, await asked(page));
    expect(shown.verdict).toBe("verified");
    expect(shown.banner).toMatch(/^✓ Verified/);
    expect(shown.banner).toContain("Verified (pinned to");
    expect(await page.locator("#record-name").innerText()).toBe("session.aarl");
    await page.screenshot({ path: join(SCREENSHOTS, "drop-page-verified.png"), fullPage: true });
    // A second record dropped replaces the first, which must let go of the window: a table
    // still listening there would keep its whole account alive, one more per drop.
    await page.dispatchEvent("#drop", "drop", { dataTransfer: transfer });
    expect((await pageVerdict(page, await asked(page))).verdict).toBe("verified");
    const cdp = await page.context().newCDPSession(page);
    const windowObject = (await cdp.send("Runtime.evaluate", { expression: "window" })).result.objectId ?? "";
    const { listeners } = await cdp.send("DOMDebugger.getEventListeners", { objectId: windowObject });
    // (Its size is watched by a ResizeObserver on its own viewport, not by the window.)
    expect(listeners.filter((l) => ["resize", "beforeprint", "afterprint"].includes(l.type)).length).toBe(2);
    await closeClean(opened);
  });
});
