import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aegis, largeRecord } from "./support.js";
import { CHROMIUM, asked, launchChromium, pageVerdict } from "./support/browser.js";

/**
 * The report page's table and states as a newcomer meets them (issue 31, part 4): a tall
 * window, an unattended headless Chromium, keys on the drop page, the banner of a Tampered
 * record, the Envelope's count, the columns at 1400 px. No skip: without Chromium these fail.
 */
const work = mkdtempSync(join(tmpdir(), "aegis-report-page-"));

describe("the report page's table and states", () => {
  let browser: Browser;
  const demo = join(work, "demo");
  const blank = join(work, "verify.html");
  let key = "";

  beforeAll(async () => {
    expect(aegis(["demo", "--out", demo]).status).toBe(0);
    expect(aegis(["report", "--blank", "--out", blank]).status).toBe(0);
    key = readFileSync(join(demo, "signing.pub"), "utf8").trim().split("\n").at(-1) ?? ""; // SPEC §13.6: the header, then the key
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function opened(file: string, width: number, height: number, hash = ""): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height } });
    await page.goto(`${pathToFileURL(file).href}${hash}`);
    return page;
  }

  it("in a window 1400x2000 the table shows every row that fits, and End reaches the last of 51 rows", async () => {
    const record = join(work, "fifty.aarl");
    await largeRecord(record, 100); // an open, 49 calls, a close
    const out = join(work, "fifty.html");
    expect(aegis(["report", "--out", out, record]).status).toBe(0);
    const page = await opened(out, 1400, 2000);
    expect((await pageVerdict(page)).verdict).toBe("verified");
    expect(await page.locator("#row-count").innerText()).toBe("51 rows");
    // No scroll and no resize since the page was opened: every row inside the table's
    // visible height must be there (a table sized to a guess of 600 px rendered 34).
    // Rows are as tall as their wrapped cells, so: the rows rendered reach the table's bottom edge.
    const seen = await page.$eval(".grid-viewport", (viewport) => {
      const bottom = viewport.getBoundingClientRect().bottom;
      const rows = Array.from(viewport.querySelectorAll(".grid-body .grid-row")).map((r) => r.getBoundingClientRect());
      return { height: viewport.clientHeight, rendered: rows.length, reach: Math.max(...rows.map((r) => r.bottom)) - bottom };
    });
    expect(seen.height).toBeGreaterThan(35 * 28);
    if (seen.rendered < 51) expect(seen.reach).toBeGreaterThanOrEqual(0);
    await page.focus(".grid");
    await page.keyboard.press("End");
    await expect.poll(() => page.locator(".grid-body .is-active .cell-line").innerText()).toBe("100");
    await page.close();
  });

  it("with the rows read in the workers the verdict is aegis verify's, verified and with one byte altered near the end", async () => {
    const record = join(work, "many.aarl");
    await largeRecord(record, 8_000);
    const rows = readFileSync(record);
    const altered = Buffer.from(rows);
    // A byte of the tool id of the intent at seq 7001 (row 7002): its hash changes, so the next row's back-reference breaks.
    const row = altered.toString("latin1").split("\n")[7_001] ?? "";
    const offset = altered.indexOf(row, 0, "latin1") + row.indexOf('"fs.read"') + 2;
    altered[offset] = "x".charCodeAt(0);
    const tampered = join(work, "many-altered.aarl");
    writeFileSync(tampered, altered);
    for (const path of [record, tampered]) {
      const out = `${path}.html`;
      expect(aegis(["report", "--out", out, path]).status).toBe(0);
      const cli = JSON.parse(aegis(["verify", "--json", path]).stdout) as { lines: number };
      // The split walk (adr/0028): the workers read every row and check its signature under
      // the key they were told of, and the main thread links; no check fell to it here.
      const page = await opened(out, 1400, 1000);
      expect((await pageVerdict(page)).json).toEqual(cli);
      expect(await page.evaluate(() => document.body.dataset["walk"])).toBe("split");
      expect(await page.evaluate(() => document.body.dataset["checkedHere"])).toBe("0");
      await page.close();
      // `#walk=sequential`: the format's walk on the main thread, its signatures in the workers.
      const alone = await opened(out, 1400, 1000, "#walk=sequential");
      expect((await pageVerdict(alone)).json).toEqual(cli);
      expect(await alone.evaluate(() => document.body.dataset["walk"])).toBe("sequential");
      await alone.close();
    }
    expect(JSON.parse(aegis(["verify", "--json", tampered]).stdout)).toMatchObject({ verdict: "tampered", position: { session_index: 0, seq: 7_002 } });
  }, 300_000);

  it("chromium --headless --virtual-time-budget --dump-dom, run as a child process, takes the page with its verdict", async () => {
    const out = join(work, "dump.html");
    expect(aegis(["report", "--key", key, "--out", out, join(demo, "session.aarl")]).status).toBe(0);
    const dom = await dumpDom(out);
    const body = /<body[^>]*>/.exec(dom)?.[0] ?? "";
    expect(body).toContain('data-verdict="verified"');
    expect(body).toContain('data-state="ready"');
    expect(dom).toMatch(/✓<\/span> Verified/);
    expect(dom).not.toMatch(/Verifying in this browser… \d+%/);
  });

  it("on the drop page a key pasted first pins to it, and one pasted after the file verifies it again", async () => {
    const page = await opened(blank, 1400, 1000);
    // A fill may reach the page as more than one input event, each a verification of its own,
    // run in order: each step waits until every verification asked for so far has finished.
    await page.fill("#drop-keys", key);
    await page.setInputFiles("#drop-file", join(demo, "session.aarl"));
    let shown = await pageVerdict(page, await asked(page));
    expect(shown.banner).toContain("pinned: every Session must be signed by one of 1 given key(s)");
    expect(shown.json?.["trust"]).toBe("pinned");
    // The keys cleared: the same file again, unpinned.
    await page.fill("#drop-keys", "");
    shown = await pageVerdict(page, await asked(page));
    expect(shown.json?.["trust"]).toBe("unpinned");
    expect(shown.banner).toContain("unpinned: no key was given");
    // A key pasted after the file: verified again, pinned to it.
    await page.fill("#drop-keys", `# aegis ed25519 public key\n${key}`);
    shown = await pageVerdict(page, await asked(page));
    expect(shown.json?.["trust"]).toBe("pinned");
    expect(shown.banner).toContain("one of 1 given key(s)");
    // A key that is not the signer's, pasted after: Indeterminate, as aegis verify --key says.
    const other = "ab".repeat(32);
    await page.fill("#drop-keys", other);
    shown = await pageVerdict(page, await asked(page));
    const cli = JSON.parse(aegis(["verify", "--json", "--key", other, join(demo, "session.aarl")]).stdout) as Record<string, unknown>;
    expect(shown.json).toEqual(cli);
    await page.close();
  });

  it("a Tampered banner does not call its Sessions verified", async () => {
    const out = join(work, "tampered.html");
    expect(aegis(["report", "--key", key, "--out", out, join(demo, "session-tampered.aarl")]).status).toBe(0);
    const page = await opened(out, 1400, 1000);
    const shown = await pageVerdict(page);
    expect(shown.verdict).toBe("tampered");
    expect(shown.banner).toMatch(/^✗ Tampered/);
    const sessions = await page.locator("#banner dt:text-is('Sessions') + dd").innerText();
    expect(sessions).not.toMatch(/^\d+ verified/);
    expect(sessions).toMatch(/^1 opened by an accepted open Line; not verified, as the record is Tampered/);
    await page.close();
  });

  it("the Envelope's count is aegis envelope verify's, tool definitions included", async () => {
    const record = join(work, "tools.aarl");
    writeFileSync(record, await recordNamingTools());
    const envelope = join(demo, "session.envelope");
    const summary = aegis(["envelope", "verify", "--envelope", envelope, record]).stdout.trim().split("\n").at(-1) ?? "";
    expect(summary).toMatch(/^envelope: 0 present, 6 missing, .* \(of 6 digests the record names\)$/);
    const out = join(work, "tools.html");
    expect(aegis(["report", "--envelope", envelope, "--out", out, record]).status).toBe(0);
    const page = await opened(out, 1400, 1000);
    await pageVerdict(page);
    expect(await page.locator("#banner dt:text-is('Envelope*') + dd").innerText()).toBe(`session.envelope: ${summary.replace(/^envelope: /, "")}`);
    await page.close();
  });

  it("at 1400 px every column is inside the window, Recheck beside Decision, and Line is the row Time is from", async () => {
    const out = join(work, "wide.html");
    const made = aegis([
      "report",
      "--policy",
      join(demo, "policy-stricter.yaml"),
      "--envelope",
      join(demo, "session.envelope"),
      "--out",
      out,
      join(demo, "session.aarl"),
    ]);
    expect(made.status).toBe(0);
    const page = await opened(out, 1400, 1000);
    await pageVerdict(page);
    const headers = await page.$$eval("[role=columnheader]", (cells) =>
      cells.map((c) => ({ title: c.textContent, right: c.getBoundingClientRect().right, cut: c.scrollWidth > c.clientWidth })),
    );
    const titles = headers.map((h) => h.title);
    expect(titles).toEqual(expect.arrayContaining(["Decision", "Recheck", "Envelope", "Outcome", "Approval"]));
    expect(titles.indexOf("Recheck")).toBe(titles.indexOf("Decision") + 1);
    for (const h of headers) {
      expect(h.right, h.title ?? "").toBeLessThanOrEqual(1400);
      expect(h.cut, h.title ?? "").toBe(false);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1400);
    // Times and Line numbers whole (a longer recheck or decision ends in an ellipsis, its whole text in the cell's title).
    const cut = await page.$$eval(".grid-body .cell-time, .grid-body .cell-line", (cells) => cells.filter((c) => c.scrollWidth > c.clientWidth).length);
    expect(cut).toBe(0);
    expect((await page.locator(".grid-body .cell-recheck").allInnerTexts()).filter((t) => t.startsWith("newly_blocked")).length).toBe(2);
    // call-1's Line is its intent's row, the row its Time is read from.
    const rows = readFileSync(join(demo, "session.aarl"), "utf8").split("\n");
    const intent = rows.findIndex((r) => r.includes('"call_id":"call-1"') && r.includes('"line_type":"intent"'));
    const time = (JSON.parse(rows[intent] ?? "{}") as { time?: string }).time;
    const row = page.locator(".grid-body .is-call").filter({ hasText: "call-1" }).first();
    expect(await row.locator(".cell-line").innerText()).toBe(String(intent + 1));
    expect(await row.locator(".cell-time").innerText()).toBe(time);
    await page.close();
  });
});

/** The DOM an unattended headless Chromium takes of the page, with a virtual-time budget: bounded in real time too. */
function dumpDom(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      CHROMIUM,
      ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--virtual-time-budget=600000", "--dump-dom", pathToFileURL(file).href],
      {
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    const limit = setTimeout(() => child.kill("SIGKILL"), 150_000);
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(limit);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}

/**
 * A record of three calls whose outcomes each name a tool definition (`tool_spec_digest`,
 * SPEC §17.6), two of them the same one: `aegis envelope verify` asks for three requests,
 * one response and two definitions.
 */
async function recordNamingTools(): Promise<string> {
  const { PrevHash, PolicySetHash, RequestDigest, ResponseDigest, SigningKey, ToolSpecDigest } = await import("@aegis/format");
  const { sealLine } = await import("@aegis/format/internal");
  const key = SigningKey.fromSeed(new Uint8Array(32).fill(7));
  let tail = sealLine({ schema_version: 2, line_type: "open", seq: 0, prev_hash: PrevHash.GENESIS, public_key: key.publicKeyHex }, key);
  const rows = [tail.text];
  const specs = [ToolSpecDigest.of("a"), ToolSpecDigest.of("b"), ToolSpecDigest.of("a")];
  let seq = 1;
  for (const [i, spec] of specs.entries()) {
    const base = { schema_version: 2, call_id: `call-${i}`, tool_id: "fs.read", request_digest: RequestDigest.of(Buffer.from(`r${i}`)) };
    tail = sealLine({ ...base, line_type: "intent", seq: seq++, prev_hash: PrevHash.after(tail.lineHash) });
    rows.push(tail.text);
    tail = sealLine(
      {
        ...base,
        line_type: "outcome",
        seq: seq++,
        prev_hash: PrevHash.after(tail.lineHash),
        policy_set_hash: PolicySetHash.of("p"),
        policy: { status: "allowed" },
        capability: { status: "allowed" },
        execution: { status: "success" },
        tool_spec_digest: spec,
        ...(i === 0 ? { response_digest: ResponseDigest.of(Buffer.from("ok")) } : {}),
      },
      key,
    );
    rows.push(tail.text);
  }
  rows.push(sealLine({ schema_version: 2, line_type: "close", seq, prev_hash: PrevHash.after(tail.lineHash) }, key).text);
  return `${rows.join("\n")}\n`;
}
