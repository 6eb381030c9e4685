import { decodeUtf8, describePosition, sha256Hex } from "@aegis/format/browser";
import type { Entry, HeldEntry } from "@aegis/cli/browser";
import { fromBase64 } from "../decode.js";
import type { RowContext } from "./cells.js";
import { h, replaceChildren } from "./dom.js";

/** The details of one row: its Lines as recorded, the recheck, and the Envelope's bytes on demand. */
export function renderDetails(target: HTMLElement, entry: Entry, context: RowContext): void {
  const parts: (HTMLElement | undefined)[] = [h("h2", { id: "details-title", tabindex: -1 }, titleOf(entry))];
  if ("after_break" in entry && entry.after_break)
    parts.push(h("p", { class: "warning" }, "After the break: nothing from here on is vouched for by the verification."));
  if (entry.kind === "call") {
    if (entry.intent !== undefined)
      parts.push(
        h(
          "p",
          {},
          `Intent at ${describePosition(entry.intent.at)} (line ${entry.intent.line})${entry.intent.time === undefined ? "" : `, ${entry.intent.time}`}`,
        ),
      );
    parts.push(h("p", {}, `Request digest ${entry.request_digest}`));
    if (entry.outcome === undefined) parts.push(h("p", {}, "No outcome: the call was in flight when its Session ended."));
    else {
      parts.push(h("p", {}, `Outcome at ${describePosition(entry.outcome.at)} (line ${entry.outcome.line})`));
      parts.push(h("pre", { class: "line-json" }, JSON.stringify(entry.outcome.record, null, 2)));
    }
    const recheck = context.recheckByLine.get(entry.outcome?.line ?? -1);
    if (recheck !== undefined && context.data.recheck !== null) {
      parts.push(h("h3", {}, `Recheck under ${context.data.recheck.policy}`));
      parts.push(h("p", {}, recheck.text, recheck.rule === null ? "" : ` (now decided by rule ${recheck.rule})`));
      if (recheck.why !== null) parts.push(h("p", {}, recheck.why));
    }
    if (context.data.envelope !== null) {
      parts.push(h("h3", {}, `Envelope ${context.data.envelope.source}`));
      parts.push(bytesView("Request", entry.request_digest, context.data.envelope.digests[entry.request_digest]));
      const response = entry.outcome?.record.response_digest;
      if (response !== undefined) parts.push(bytesView("Response", response, context.data.envelope.digests[response]));
    }
  } else if (entry.kind === "decision") {
    const parked = context.account.parkedBy.get(entry.record.approval_id);
    parts.push(
      h(
        "p",
        {},
        parked === undefined
          ? "It answers no park in this file."
          : `It answers call ${parked.call_id}, parked at ${describePosition(parked.outcome?.at ?? entry.at)}.`,
      ),
    );
    parts.push(h("p", {}, "Signed by its Session's key, like every signed Line: whoever holds that key answered."));
    parts.push(h("pre", { class: "line-json" }, JSON.stringify(entry.record, null, 2)));
  } else if (entry.kind === "session") {
    parts.push(h("p", {}, `Public key ${entry.public_key}`));
    if (entry.prev_session_tail !== undefined) parts.push(h("p", {}, `Follows the Session ending in ${entry.prev_session_tail}`));
  } else if (entry.kind === "other") {
    for (const p of entry.problems) parts.push(h("p", {}, `Does not fit its type: ${p}`));
  } else if (entry.kind === "unreadable") {
    parts.push(h("p", {}, entry.detail));
  }
  replaceChildren(target, ...parts);
  target.hidden = false;
  target.querySelector<HTMLElement>("#details-title")?.focus();
}

function titleOf(entry: Entry): string {
  switch (entry.kind) {
    case "call":
      return `Call ${entry.call_id}: ${entry.tool_id}`;
    case "decision":
      return `Decision on ${entry.record.approval_id}`;
    case "session":
      return `Session ${entry.session_index} opened (line ${entry.line})`;
    case "close":
      return `Session ${entry.at.session_index} closed (line ${entry.line})`;
    case "other":
      return `Line ${entry.line}: ${entry.line_type}`;
    case "unreadable":
      return `Line ${entry.line} cannot be read`;
  }
}

/** One digest's bytes: its status, and for present bytes a button that shows them, re-hashed here. */
function bytesView(label: string, digest: string, held: HeldEntry | undefined): HTMLElement {
  const status = held ?? { status: "missing" as const };
  const line = h("p", {}, `${label}: ${statusText(status)}`);
  if (status.status !== "present") return line;
  const base64 = status.base64;
  if (base64 === null)
    return h(
      "p",
      {},
      `${label}: present, ${status.size} bytes, not carried in this page (it holds 64 MiB of Envelope bytes at most): aegis show --envelope gives them`,
    );
  const out = h("div", { class: "bytes" });
  const button = h("button", { type: "button" }, `Show the ${label.toLowerCase()} bytes`);
  button.addEventListener("click", () => {
    const bytes = fromBase64(base64);
    const found = sha256Hex(bytes);
    const text = decodeUtf8(bytes);
    replaceChildren(
      out,
      h(
        "p",
        {},
        found === digest
          ? `Hashed in this browser: ${found}, the digest the record names.`
          : `Hashed in this browser: ${found}, NOT the digest the record names (${digest}).`,
      ),
      h("pre", { class: "line-json" }, text ?? `${bytes.length} bytes, not UTF-8`),
    );
  });
  return h("div", {}, line, button, out);
}

function statusText(held: HeldEntry): string {
  switch (held.status) {
    case "present":
      return `present, ${held.size} bytes`;
    case "missing":
      return "missing: the Envelope holds no bytes for this digest";
    case "redacted":
      return `redacted at ${held.redacted_at}: ${held.reason}`;
    case "altered":
      return `altered: the stored bytes hash to ${held.found}, not to the digest the record names`;
  }
}
