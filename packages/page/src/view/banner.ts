import { describeVerdict, type Verification } from "@aegis/format/browser";
import { summarizeUnfinishedCalls, type ReportData, type Where } from "@aegis/cli/browser";
import type { SessionEntry } from "../account.js";
import { h, replaceChildren } from "./dom.js";

export interface VerdictFacts {
  readonly verification: Verification;
  /** `aegis verify --json`'s document for it. */
  readonly json: Readonly<Record<string, unknown>>;
  readonly where: Where;
  readonly pinned: boolean;
  /** How many keys it was pinned to: the page's own, or those pasted on the drop page. */
  readonly keyCount: number;
  readonly milliseconds: number;
  readonly backend: string;
}

const WORD = { verified: "Verified", tampered: "Tampered", indeterminate: "Indeterminate" } as const;
const MARK = { verified: "✓", tampered: "✗", indeterminate: "?" } as const;

/**
 * The verdict banner: the verdict line `aegis verify` prints, the reason and a link to the
 * Line it names, the keys and Sessions, and how the verdict was reached.
 */
export function renderBanner(
  target: HTMLElement,
  facts: VerdictFacts,
  sessions: readonly SessionEntry[],
  data: ReportData,
  goTo: ((where: Exclude<Where, null>) => void) | undefined,
): void {
  const v = facts.verification;
  const status = v.verdict.status;
  target.className = `banner banner-${status}`;
  target.setAttribute("data-verdict", status);
  const reason = v.verdict.status === "verified" ? undefined : v.verdict.reason;
  const where = facts.where;
  replaceChildren(
    target,
    h("p", { class: "verdict-word" }, h("span", { "aria-hidden": "true", class: "verdict-mark" }, MARK[status]), ` ${WORD[status]}`),
    h("p", { class: "verdict-line", id: "verdict-line" }, describeVerdict(v)),
    reason === undefined ? undefined : h("p", { class: "verdict-reason" }, `Reason: ${reason.code}`, where === null ? "" : ` at ${whereText(where)}`),
    where === null || goTo === undefined ? undefined : linkTo(where, goTo),
    h(
      "dl",
      { class: "facts" },
      ...fact(
        "Trust",
        facts.pinned
          ? `pinned: every Session must be signed by one of ${facts.keyCount} given key(s)`
          : "unpinned: no key was given, so anyone could have signed this record",
      ),
      ...fact("Keys", v.key_ids.length === 0 ? "none published" : v.key_ids.map((id) => `key_id ${id}`).join("\n")),
      ...fact("Coverage", v.coverage === undefined ? "no signature verified" : `session ${v.coverage.session_index} seq ${v.coverage.seq}`),
      ...fact("Sessions", sessionsText(v, sessions)),
      ...fact("Lines", String(v.lines)),
      ...fact("Head", v.head ?? "none"),
      ...unfinishedFact(v),
      ...writtenFacts(data),
    ),
    data.recheck === null && data.envelope === null && data.checkpoints === null
      ? undefined
      : h(
          "p",
          { class: "provenance" },
          `The recheck, Envelope and checkpoint facts marked * were computed by aegis ${data.version} when this page was written (${data.written_at}), not in this browser.`,
        ),
    h(
      "p",
      { class: "provenance" },
      `This verdict was computed in this browser, when the page was opened, by the verifier of aegis ${data.version} that the page carries ` +
        `(${facts.backend}), in ${(facts.milliseconds / 1000).toFixed(2)} s. Nothing was sent anywhere.`,
    ),
  );
}

/** What `aegis report` found when it wrote the page, beside the browser's own verdict. */
function writtenFacts(data: ReportData): HTMLElement[] {
  const facts: HTMLElement[] = [];
  if (data.recheck !== null) {
    const counts = new Map<string, number>();
    for (const c of data.recheck.calls) counts.set(c.code, (counts.get(c.code) ?? 0) + 1);
    const tally = [...counts].map(([code, n]) => `${n} ${code}`).join(", ");
    facts.push(...fact("Recheck*", `under ${data.recheck.policy} (policy_set_hash ${data.recheck.policy_set_hash}): ${tally === "" ? "no call" : tally}`));
  }
  if (data.envelope !== null) {
    // As `aegis envelope verify` counts them, tool definitions included.
    const t = data.envelope.tally;
    const tally = `${t.present} present, ${t.missing} missing, ${t.digest_mismatch} digest_mismatch, ${t.redacted} redacted (of ${t.digests} digests the record names)`;
    facts.push(...fact("Envelope*", [`${data.envelope.source}: ${tally}`, ...data.envelope.damage].join("\n")));
  }
  if (data.checkpoints !== null) facts.push(...fact("Checkpoints*", [data.checkpoints.verdict, ...data.checkpoints.findings].join("\n")));
  return facts;
}

/** SPEC §13.4: calls a Session left with no outcome before it ended, as after a killed writer; the table shows each. */
function unfinishedFact(v: Verification): HTMLElement[] {
  const summary = summarizeUnfinishedCalls(v.unfinished_calls);
  return summary === undefined ? [] : fact("Unfinished", `${summary}; the table shows ${v.unfinished_calls.count === 1 ? "it" : "each"} with no outcome`);
}

function fact(term: string, detail: string): HTMLElement[] {
  return [h("dt", {}, term), h("dd", {}, detail)];
}

function sessionsText(v: Verification, sessions: readonly SessionEntry[]): string {
  const opened = sessions.map((s) => `session ${s.session_index}: public key ${s.public_key}${s.time === undefined ? "" : `, opened ${s.time}`}`);
  // Only a Verified record has verified Sessions: beside Tampered or Indeterminate, "verified"
  // would vouch for what the verdict does not.
  const count =
    v.verdict.status === "verified"
      ? `${v.sessions} verified`
      : `${v.sessions} opened by an accepted open Line; not verified, as the record is ${WORD[v.verdict.status]}`;
  return [count, ...opened].join("\n");
}

function whereText(where: Exclude<Where, null>): string {
  if ("line" in where) return `line ${where.line}`;
  if ("seq" in where) return `session ${where.session_index} seq ${where.seq}`;
  return `session ${where.session_index}`;
}

function linkTo(where: Exclude<Where, null>, goTo: (where: Exclude<Where, null>) => void): HTMLElement {
  const link = h("a", { href: "#records", class: "goto" }, `Go to ${whereText(where)} in the table`);
  link.addEventListener("click", (event) => {
    event.preventDefault();
    goTo(where);
  });
  return h("p", {}, link);
}
