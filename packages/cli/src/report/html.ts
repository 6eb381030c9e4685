import { createReadStream } from "node:fs";
import { createGzip } from "node:zlib";
import type { ReportData } from "./data.js";
import type { PageAssets } from "./page-assets.js";

/** The record a page carries: a file and how many of its bytes (its size when the page began). */
export interface EmbeddedRecord {
  readonly path: string;
  readonly size: number;
}

/**
 * The page, in parts, for streaming to a file: markup, the data `aegis report` computed,
 * the record as base64 (every byte as it is in the file), the signature worker's script as
 * text, and the page's script. Nothing is fetched when it opens, and the Content Security
 * Policy says so to the browser: the page can reach no network.
 */
export async function* reportPage(assets: PageAssets, data: ReportData, record: EmbeddedRecord | undefined): AsyncGenerator<string> {
  const name = data.record_name ?? "";
  yield `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' blob:; worker-src blob:; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'">
<meta name="generator" content="aegis ${escapeText(data.version)}">
<title>${record === undefined ? "aegis: verify a record in this browser" : `aegis report: ${escapeText(name)}`}</title>
<style>
${assets.style}</style>
</head>
<body data-state="loading">
<header class="page-head">
<h1>${record === undefined ? "Verify an Agent Action Record" : "Agent Action Record"}</h1>
<span class="record-name" id="record-name">${escapeText(name)}</span>
<span class="written">page written ${escapeText(data.written_at)} by aegis ${escapeText(data.version)}</span>
</header>
<main>
<section id="drop" hidden aria-labelledby="drop-title">
<h2 id="drop-title">Choose or drop a record</h2>
<p>The record is read and verified in this browser. It is not uploaded anywhere: this page cannot reach the network.</p>
<p><label for="drop-file">Record (<code>.aarl</code>)</label> <input type="file" id="drop-file" accept=".aarl,.jsonl,.txt"></p>
<p><label for="drop-keys">Trusted public keys, optional: 64 hex digits each, one per line (lines starting with # are skipped, so a .pub file can be pasted whole). With none, the verdict is unpinned: it says the record is whole, not whose it is.</label></p>
<textarea id="drop-keys" spellcheck="false" autocomplete="off"></textarea>
<p id="drop-error" role="alert"></p>
</section>
<section id="banner" class="banner banner-pending" role="status" aria-live="polite">
<p class="progress">${record === undefined ? "No record yet." : "Verifying in this browser…"}</p>
<noscript><p>This page verifies the record with the script it carries: allow scripts to see the verdict. Nothing it shows is taken on trust.</p></noscript>
</section>
<section id="records" aria-labelledby="records-title"${record === undefined ? " hidden" : ""}>
<h2 id="records-title">Calls and Lines</h2>
<div id="filters"></div>
<p id="row-count" aria-live="polite"></p>
<div id="table"></div>
</section>
<section id="details-section" aria-labelledby="details-heading"${record === undefined ? " hidden" : ""}>
<h2 id="details-heading">Details</h2>
<div id="details" tabindex="-1"><p class="muted">Choose a row (click it, or move with the arrow keys and press Enter) to see everything recorded for it.</p></div>
</section>
<details class="raw">
<summary>The verdict as <code>aegis verify --json</code> prints it, computed in this browser</summary>
<pre id="verification-json"></pre>
</details>
</main>
<script type="application/json" id="aegis-data">${scriptJson(data)}</script>
`;
  if (record !== undefined) {
    // gzip: a record's JSON shrinks about sixfold, and the browser inflates it natively. The
    // page checks the size it comes to; the verdict is about the inflated bytes, each one.
    yield `<script type="text/plain" id="aegis-record" data-encoding="gzip" data-size="${record.size}">`;
    yield* base64Of(gzipped(record));
    yield `</script>\n`;
  }
  yield `<script type="text/plain" id="aegis-worker">${assets.worker}</script>\n<script>${assets.script}</script>\n</body>\n</html>\n`;
}

/** JSON inside a script element: a `<` could end it (`</script>`), so none is left as is. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

function escapeText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The file's first `size` bytes, gzipped. */
function gzipped(record: EmbeddedRecord): AsyncIterable<Buffer> {
  const gzip = createGzip({ level: 6 });
  if (record.size === 0) gzip.end();
  else
    createReadStream(record.path, { start: 0, end: record.size - 1, highWaterMark: 1024 * 1024 })
      .on("error", (error) => gzip.destroy(error))
      .pipe(gzip);
  return gzip;
}

/** Bytes as base64, in lines of 76 characters. */
async function* base64Of(source: AsyncIterable<Buffer>): AsyncGenerator<string> {
  let carry = Buffer.alloc(0);
  for await (const chunk of source) {
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    // Whole groups of 57 bytes: each becomes one 76-character line, with no padding inside.
    const whole = bytes.length - (bytes.length % 57);
    yield linesOf(bytes.subarray(0, whole));
    carry = Buffer.from(bytes.subarray(whole));
  }
  if (carry.length > 0) yield linesOf(carry);
}

function linesOf(bytes: Buffer): string {
  const text = bytes.toString("base64");
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += 76) lines.push(text.slice(i, i + 76));
  return lines.length === 0 ? "" : `\n${lines.join("\n")}`;
}
