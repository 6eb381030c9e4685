import { createWriteStream } from "node:fs";
import { LineHash, PolicySetHash, PrevHash, RequestDigest, type SigningKey } from "@aegis/format";
import { sealLine } from "@aegis/format/internal";

/**
 * A record of `lines` Lines for the benches: one Session, an `open`, then calls (an unsigned
 * intent and a signed outcome each), then a `close`: half the Lines signed. Each Line's
 * canonical text is written from a template, members in canonical order, because sealing
 * ten million Lines member by member takes longer than verifying them; the first call's
 * Lines are checked against the writer's own sealing, and every bench verifies what it
 * wrote, so a template that drifted from the canonical form fails loudly.
 */
/** Which call (1-based) of a bench record named an endpoint, with `hosts`: every fifth; and which. */
export function benchEndpoint(call: number): { readonly host: string; readonly port: number } | undefined {
  return call % 5 === 0 ? { host: `api-${call % 7}.example.com`, port: call % 2 === 0 ? 443 : 8443 } : undefined;
}

/** The canonical path a call of a bench record named, when it named no endpoint (its intent's `seq` picks it). */
export function benchPath(seq: number): string {
  return `/workspace/notes-${seq % 97}.md`;
}

/**
 * With `hosts`, every fifth call (see {@link benchEndpoint}) is a `net.get` whose decision
 * axes name an endpoint instead of a path, for `aegis show --host`.
 */
export async function writeLargeRecord(
  path: string,
  lines: number,
  key: SigningKey,
  options: { readonly hosts?: boolean } = {},
): Promise<{ readonly bytes: number; readonly signed: number }> {
  if (!Number.isSafeInteger(lines) || lines < 4 || lines % 2 !== 0) throw new Error(`a bench record has an even number of Lines, at least 4; got ${lines}`);
  const out = createWriteStream(path, { highWaterMark: 1 << 20 });
  let pending: string[] = [];
  let pendingChars = 0;
  let bytes = 0;
  let signed = 0;
  const flush = async (): Promise<void> => {
    const text = pending.join("");
    pending = [];
    pendingChars = 0;
    if (!out.write(text)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  };
  const push = async (text: string): Promise<LineHash> => {
    pending.push(text, "\n");
    pendingChars += text.length + 1;
    bytes += text.length + 1;
    if (pendingChars >= 1 << 20) await flush();
    return LineHash.of(text);
  };
  // The signing input is the canonical form without `signature` (SPEC §4), which sorts
  // last in `open` and `close`, and before `tool_id` and `wall_ms` in an outcome.
  const sign = (unsigned: string): string => {
    signed++;
    return Buffer.from(key.sign(Buffer.from(unsigned, "utf8"))).toString("hex");
  };
  const policy = PolicySetHash.of("bench-policy");
  const keyId = key.keyId;

  const open = `{"key_id":"${keyId}","line_type":"open","prev_hash":"${PrevHash.GENESIS}","public_key":"${key.publicKeyHex}","schema_version":2,"seq":0}`;
  let tail = await push(`${open.slice(0, -1)},"signature":"${sign(open)}"}`);
  for (let seq = 1; seq < lines - 1; seq += 2) {
    const call = `call-${(seq + 1) / 2}`;
    const endpoint = options.hosts === true ? benchEndpoint((seq + 1) / 2) : undefined;
    const tool = endpoint === undefined ? "fs.read" : "net.get";
    const request = RequestDigest.of(Buffer.from(`{"jsonrpc":"2.0","id":${seq},"method":"tools/call","params":{"name":"${tool}"}}`));
    const intent = `{"call_id":"${call}","line_type":"intent","prev_hash":"${tail}","request_digest":"${request}","schema_version":2,"seq":${seq},"tool_id":"${tool}"}`;
    tail = await push(intent);
    const axes =
      endpoint === undefined
        ? `{"capability":"fs.read","fs":{"path_canonical":"${benchPath(seq)}","path_raw":"./notes-${seq % 97}.md"},"matched_rule":"allow-workspace-read","role":"ops","session":"bench"}`
        : `{"capability":"net.get","matched_rule":"allow-api","net":{"host":"${endpoint.host}","port":${endpoint.port}},"role":"ops","session":"bench"}`;
    const head = `{"call_id":"${call}","capability":{"reason":"not evaluated","status":"denied"},"decision_axes":${axes},"execution":{"status":"success"},"key_id":"${keyId}","line_type":"outcome","policy":{"status":"allowed"},"policy_set_hash":"${policy}","prev_hash":"${tail}","request_digest":"${request}","schema_version":2,"seq":${seq + 1}`;
    const rest = `"tool_id":"${tool}","wall_ms":${seq % 40}}`;
    const signature = sign(`${head},${rest}`);
    const outcome = `${head},"signature":"${signature}",${rest}`;
    // The first call of each shape is checked against the writer's own sealing.
    if (seq === 1 || (endpoint !== undefined && seq === 9)) expectSealed(outcome, key);
    tail = await push(outcome);
  }
  const close = `{"key_id":"${keyId}","line_type":"close","prev_hash":"${tail}","schema_version":2,"seq":${lines - 1}}`;
  await push(`${close.slice(0, -1)},"signature":"${sign(close)}"}`);
  await flush();
  await new Promise<void>((resolve, reject) => out.end(() => resolve()).on("error", reject));
  return { bytes, signed };
}

/** The template's first outcome must be exactly what the writer's sealing makes of its members. */
function expectSealed(text: string, key: SigningKey): void {
  const members = JSON.parse(text) as Record<string, unknown>;
  delete members["signature"];
  delete members["key_id"];
  const sealed = sealLine(members, key).text;
  if (sealed !== text) throw new Error(`the bench template is not the canonical form:\n  template ${text}\n  sealed   ${sealed}`);
}
