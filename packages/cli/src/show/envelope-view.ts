import { RequestDigest, type EnvelopeRead } from "@aegis/format";
import { decodeUtf8, unmatched } from "@aegis/format/internal";
import type { EnvelopeSource } from "@aegis/envelope";
import { match } from "ts-pattern";
import type { Entry } from "./entries.js";

/**
 * What an Envelope holds for a call's request and response (`show --envelope`): the bytes,
 * as text when they are UTF-8 (a JSON-RPC message is), else as base64; or why there are
 * none. Every read re-hashes, so `present` bytes are the ones the record names.
 */
type HeldBytes =
  | { readonly status: "present"; readonly size: number; readonly text: string }
  | { readonly status: "present"; readonly size: number; readonly base64: string }
  | { readonly status: "missing" }
  | { readonly status: "redacted"; readonly redacted_at: string; readonly reason: string }
  | { readonly status: "digest_mismatch"; readonly found: string };

export interface CallBytes {
  readonly request: HeldBytes;
  readonly response?: HeldBytes;
}

export async function callBytes(source: EnvelopeSource, entry: Extract<Entry, { kind: "call" }>): Promise<CallBytes> {
  const response = entry.outcome?.record.response_digest;
  return {
    request: held(await source.get(RequestDigest.parse(entry.request_digest))),
    ...(response === undefined ? {} : { response: held(await source.get(response)) }),
  };
}

function held(read: EnvelopeRead): HeldBytes {
  return match(read)
    .with({ code: "present" }, (r): HeldBytes => {
      const text = decodeUtf8(r.bytes);
      const size = r.bytes.length;
      return text === undefined ? { status: "present", size, base64: Buffer.from(r.bytes).toString("base64") } : { status: "present", size, text };
    })
    .with({ code: "missing" }, (): HeldBytes => ({ status: "missing" }))
    .with({ code: "redacted" }, (r): HeldBytes => ({ status: "redacted", redacted_at: r.redactedAt, reason: r.reason }))
    .with({ code: "digest_mismatch" }, (r): HeldBytes => ({ status: "digest_mismatch", found: r.found }))
    .exhaustive(unmatched);
}

/** Text mode shows at most this much of a value; `--json` gives it whole. */
const SHOWN_CHARS = 2000;

/** The rows `show` adds under a call: `request bytes` and `response bytes`. */
export function renderCallBytes(bytes: CallBytes): string {
  const rows: [string, HeldBytes][] = [["request bytes", bytes.request]];
  if (bytes.response !== undefined) rows.push(["response bytes", bytes.response]);
  return rows.map(([label, h]) => `    ${label.padEnd(16)}${heldText(h)}`).join("\n");
}

function heldText(h: HeldBytes): string {
  return match(h)
    .with({ status: "present" }, (p) => {
      if (!("text" in p)) return `${p.size} bytes, not UTF-8 (base64 in --json)`;
      const shown = p.text.length > SHOWN_CHARS ? `${p.text.slice(0, SHOWN_CHARS)}… (${p.text.length - SHOWN_CHARS} more characters in --json)` : p.text;
      return JSON.stringify(shown);
    })
    .with({ status: "missing" }, () => "missing: the Envelope holds no bytes for this digest")
    .with({ status: "redacted" }, (r) => `redacted at ${r.redacted_at}: ${r.reason}`)
    .with({ status: "digest_mismatch" }, (m) => `altered: the stored bytes hash to ${m.found}, not to the digest the record names`)
    .exhaustive(unmatched);
}
