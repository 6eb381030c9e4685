/**
 * The page of `aegis report`: verifies the record it carries (or one dropped on it) with the
 * verifier of `@aegis/format`, in this browser, and shows the verdict and the account.
 */
import { checkHex, messageOf, verifyRecordBytes, type Verification } from "@aegis/format/browser";
import { verifyJson, type ReportData, type Where } from "@aegis/cli/browser";
import { readAccount, type Account } from "./account.js";
import { keepAwakeWhile } from "./awake.js";
import { embeddedRecord, wholeRecord, type RecordSource } from "./decode.js";
import { WorkerPool } from "./pool.js";
import { splitVerify } from "./record-pieces.js";
import type { Backend } from "./signature-messages.js";
import { renderBanner, type VerdictFacts } from "./view/banner.js";
import { cellsOf, rowContext, type Cells } from "./view/cells.js";
import { renderDetails } from "./view/details.js";
import { byId, h, replaceChildren } from "./view/dom.js";
import { renderFilters } from "./view/filters.js";
import { VirtualTable, type Column } from "./view/table.js";

const data = JSON.parse(byId("aegis-data", HTMLScriptElement).textContent ?? "{}") as ReportData;
const workerSource = byId("aegis-worker", HTMLScriptElement).textContent ?? "";
const banner = byId("banner", HTMLElement);
let pool: WorkerPool | undefined;
/** The table of the record shown now; a record dropped next replaces it. */
let shown: VirtualTable | undefined;
/** How many records this page has finished with: a test that drops several waits on it. */
let finished = 0;

/** `#backend=noble` makes the workers use noble for every check: the tests compare both back ends. */
function wantedBackend(): Backend | "auto" {
  return /(^|[#&])backend=noble(&|$)/.test(location.hash) ? "noble" : "auto";
}

const yielder = new MessageChannel();
/** A task boundary without setTimeout's clamp: the page repaints and stays responsive. */
function yieldToPage(): Promise<void> {
  return new Promise((resolve) => {
    yielder.port1.onmessage = () => resolve();
    yielder.port2.postMessage(null);
  });
}

/**
 * The progress shown changes at most this often, in ms. Once a piece (some 50 times a second)
 * it cost about 0.8 s of CPU a 100,000-call record in layout, paint and the compositor,
 * taken from the workers on a machine of few cores (adr/0028).
 */
const PROGRESS_MS = 250;

/** The signature workers, started once: before the record is decoded, so their start costs no time of their own. */
function workers(): WorkerPool {
  pool ??= new WorkerPool(workerSource, Math.max(1, Math.min(navigator.hardwareConcurrency || 2, 8)), wantedBackend());
  // How many workers check: bench/src/report.ts gives aegis verify as many threads.
  document.body.dataset["workers"] = String(pool.size);
  pool.start();
  return pool;
}

async function verify(source: RecordSource, keys: readonly string[] | undefined): Promise<VerdictFacts> {
  const checkers = workers();
  const started = performance.now();
  const trust = keys === undefined ? {} : { trust: keys };
  let shownAt = Number.NEGATIVE_INFINITY;
  const between = async (read: number): Promise<void> => {
    const now = performance.now();
    if (now - shownAt >= PROGRESS_MS) {
      shownAt = now;
      banner.querySelector(".progress")?.replaceChildren(`Verifying in this browser… ${Math.round((100 * read) / Math.max(source.bytes.length, 1))}%`);
    }
    await yieldToPage();
  };
  let verification: Verification;
  // Issue 31: the workers read each piece of the record (parse, hash, signature) and this
  // thread links them, as `aegis verify --threads N` does. `#walk=sequential`: the format's
  // walk on this thread, only the signatures in the workers (to compare; adr/0028).
  if (/(?:^|[#&])walk=sequential(?:&|$)/.test(location.hash)) {
    const bytes = await source.whole;
    verification = await verifyRecordBytes(bytes, {
      ...trust,
      pool: checkers,
      // Every check to the workers from the first: this thread's Ed25519 is JavaScript's.
      tuning: { inline: 0, inlineWhenRunning: 0, eager: true, batch: 256, windowPerThread: 4 },
      between,
    });
    document.body.dataset["walk"] = "sequential";
  } else {
    const split = await splitVerify(source, trust, checkers, between);
    verification = split.verification;
    // Signatures this thread checked itself (a worker's guess of key was wrong): the tests read it.
    document.body.dataset["walk"] = "split";
    document.body.dataset["checkedHere"] = String(split.checkedHere);
  }
  const milliseconds = performance.now() - started;
  const backend =
    (await checkers.whenReady()) === "webcrypto"
      ? "SHA-256 by @noble/hashes; Ed25519 by this browser's WebCrypto, under the strict rule of SPEC §8.5"
      : "SHA-256 by @noble/hashes; Ed25519 by @noble/ed25519, under the strict rule of SPEC §8.5";
  const pinned = keys !== undefined;
  const json = verifyJson(verification, pinned);
  return { verification, json, where: json["position"] as Where, pinned, keyCount: keys?.length ?? 0, milliseconds, backend };
}

const COLUMNS: readonly Column[] = [
  { key: "line", title: "Line", width: "4em" },
  { key: "time", title: "Time (UTC)", width: "14.5em" },
  { key: "session", title: "Session", width: "5.5em" },
  { key: "what", title: "Call", width: "minmax(5em, 1fr)" },
  { key: "tool", title: "Tool", width: "minmax(5em, 1fr)" },
  { key: "decision", title: "Decision", width: "minmax(9em, 1.5fr)" },
];
/** Recheck beside Decision: what an operator compares first (with `--policy`). */
const RECHECK: Column = { key: "recheck", title: "Recheck", width: "minmax(9em, 1.2fr)" };
const AFTER: readonly Column[] = [
  { key: "outcome", title: "Outcome", width: "minmax(7em, 1fr)" },
  { key: "capability", title: "Capability", width: "minmax(6em, 0.8fr)" },
  { key: "duration", title: "Duration", width: "6em" },
  { key: "approval", title: "Approval", width: "minmax(6em, 1fr)" },
];
const ENVELOPE: Column = { key: "envelope", title: "Envelope", width: "minmax(6em, 0.8fr)" };

async function run(source: RecordSource, keys: readonly string[] | undefined): Promise<void> {
  document.body.dataset["state"] = "verifying";
  replaceChildren(banner, h("p", { class: "progress" }, "Verifying in this browser…"));
  banner.className = "banner banner-pending";
  let facts: VerdictFacts;
  try {
    facts = await verify(source, keys);
  } catch (error) {
    banner.className = "banner banner-error";
    replaceChildren(banner, h("p", { class: "verdict-word" }, "Not verified"), h("p", {}, `This browser could not verify the record: ${messageOf(error)}`));
    document.body.dataset["state"] = "error";
    document.body.dataset["finished"] = String(++finished);
    return;
  }
  const v = facts.verification;
  const stopped = v.verdict.status === "tampered" || (v.verdict.status === "indeterminate" && v.verdict.reason.code === "line_too_long");
  renderBanner(banner, facts, [], data, undefined);
  byId("verification-json", HTMLElement).textContent = JSON.stringify(facts.json, null, 2);
  // Times from the page's navigation, for bench/src/report.ts.
  performance.mark("aegis-verdict");
  document.body.dataset["verdict"] = v.verdict.status;
  document.body.dataset["state"] = "verdict";
  await yieldToPage();

  const account = await readAccount(await source.whole, stopped ? v.lines : v.lines + 1);
  const context = rowContext(account, data);
  const cells: Cells[] = account.entries.map((e) => cellsOf(e, context));
  const columns = [...COLUMNS, ...(data.recheck === null ? [] : [RECHECK]), ...AFTER, ...(data.envelope === null ? [] : [ENVELOPE])];
  const details = byId("details", HTMLElement);
  const table = new VirtualTable(
    columns,
    (i) => cells[i] ?? EMPTY,
    (i) => {
      const entry = account.entries[i];
      if (entry !== undefined) renderDetails(details, entry, context);
    },
    "Every row of the record, in file order",
  );
  const count = byId("row-count", HTMLElement);
  // A call's row shows the line it began on; it is struck through when its outcome is at or after the break.
  const breakNote = stopped
    ? `; struck through: the rows from line ${v.lines} on, and the calls whose outcome is there: at or after the break, nothing in them is vouched for`
    : "";
  const filters = renderFilters(account, cells, (rows, total) => {
    count.textContent = `${rows.length === total ? `${total} rows` : `${rows.length} of ${total} rows`}${breakNote}`;
    table.show(rows);
  });
  replaceChildren(byId("filters", HTMLElement), filters);
  shown?.dispose();
  shown = table;
  replaceChildren(byId("table", HTMLElement), table.element);
  byId("records", HTMLElement).hidden = false;
  byId("details-section", HTMLElement).hidden = false;
  renderBanner(banner, facts, account.sessions, data, (where) => goTo(where, account, table));
  document.body.dataset["state"] = "ready";
  performance.mark("aegis-ready");
  document.body.dataset["finished"] = String(++finished);
}

function goTo(where: Exclude<Where, null>, account: Account, table: VirtualTable): void {
  let index: number | undefined;
  if ("line" in where) index = account.entryOfLine(where.line);
  else if ("seq" in where) index = account.entryAt(where);
  else
    index =
      account.sessions.findIndex((s) => s.session_index === where.session_index) >= 0
        ? account.entryAt({ session_index: where.session_index, seq: 0 })
        : undefined;
  if (index === undefined || !table.reveal(index)) byId("row-count", HTMLElement).textContent = "That Line is not among the rows shown: clear the filters.";
}

const EMPTY: Cells = {
  line: "",
  time: "",
  session: "",
  what: "",
  tool: "",
  capability: "",
  decision: "",
  outcome: "",
  duration: "",
  approval: "",
  recheck: "",
  envelope: "",
  classes: new Set(),
  afterBreak: false,
};

/** The drop page: a record chosen or dropped here is read in this browser and never leaves it. */
function dropPage(): void {
  const section = byId("drop", HTMLElement);
  section.hidden = false;
  const input = byId("drop-file", HTMLInputElement);
  const keysBox = byId("drop-keys", HTMLTextAreaElement);
  const problem = byId("drop-error", HTMLElement);
  keysBox.value = data.keys.join("\n");
  /** The record chosen last: keys pasted after it verify it again, pinned to them. */
  let chosen: File | undefined;
  /** One verification at a time, in the order asked for (a paste is one). */
  let running: Promise<void> = Promise.resolve();
  let asked = 0;
  const verifyChosen = (): void => {
    const file = chosen;
    if (file === undefined) return;
    // Rows beginning with # are comments, as in a trust store: a public key file aegis wrote
    // (its first row `# aegis ed25519 public key`, SPEC §13.6) can be pasted whole.
    const words = keysBox.value
      .split("\n")
      .filter((row) => !row.trim().startsWith("#"))
      .join("\n")
      .split(/\s+/)
      .filter((w) => w !== "");
    const bad = words.find((w) => checkHex(w, 64) !== undefined);
    if (bad !== undefined) {
      problem.textContent = `Not a public key: ${bad}. A public key is 64 lowercase hex digits (aegis keygen prints it).`;
      return;
    }
    problem.textContent = "";
    // How many verifications were asked for: a test waits until as many have finished.
    document.body.dataset["asked"] = String(++asked);
    running = running.then(async () => {
      byId("record-name", HTMLElement).textContent = file.name;
      await run(wholeRecord(new Uint8Array(await file.arrayBuffer())), words.length === 0 ? undefined : words);
    });
  };
  const take = (file: File | undefined): void => {
    if (file === undefined) return;
    chosen = file;
    verifyChosen();
  };
  input.addEventListener("change", () => take(input.files?.[0]));
  keysBox.addEventListener("input", verifyChosen);
  document.addEventListener("dragover", (event) => {
    event.preventDefault();
    section.classList.add("is-dragging");
  });
  document.addEventListener("dragleave", () => section.classList.remove("is-dragging"));
  document.addEventListener("drop", (event) => {
    event.preventDefault();
    section.classList.remove("is-dragging");
    take(event.dataTransfer?.files[0]);
  });
}

const record = document.getElementById("aegis-record");
if (record === null) {
  replaceChildren(banner, h("p", {}, "No record yet: choose or drop one above."));
  dropPage();
} else {
  workers();
  void keepAwakeWhile(
    (async () => {
      let source: RecordSource;
      try {
        source = embeddedRecord(record);
        await source.available(0);
      } catch (error) {
        banner.className = "banner banner-error";
        replaceChildren(banner, h("p", { class: "verdict-word" }, "Not verified"), h("p", {}, `The record in this page cannot be read: ${messageOf(error)}`));
        document.body.dataset["state"] = "error";
        return;
      }
      // The first bytes are there: the walk begins (bench/src/report.ts reads the times).
      performance.mark("aegis-decoded");
      void source.whole.then(
        () => performance.mark("aegis-inflated"),
        () => undefined,
      );
      await run(source, data.keys.length === 0 ? undefined : data.keys);
    })(),
  );
}
