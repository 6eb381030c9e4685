import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RecordWriter, SigningKey, verifyRecord } from "@aegis/format";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const BIN = join(ROOT, "packages/cli/bin/aegis.js");
export const MIRROR = fileURLToPath(new URL("./fixtures/mirror-server.mjs", import.meta.url));
export const FILESYSTEM_SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
export const EVERYTHING_SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

/** A fixed key, so that failures reproduce; never the published development key. */
export const KEY = SigningKey.fromSeed(new Uint8Array(32).fill(7));

export function tempDir(prefix = "aegis-mcp-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

let forOthers: { readonly bin: string; readonly mirror: string } | undefined;

/**
 * The one file and the mirror server, in a fresh folder every user may enter: a test that runs
 * them as another user must pass when the checkout sits in a folder only its owner can enter
 * (a 0700 home or `mktemp -d`, as a CI running as root often has). Built once per test file.
 */
export function reachableByOthers(): { readonly bin: string; readonly mirror: string } {
  if (forOthers !== undefined) return forOthers;
  const dir = tempDir("aegis-for-others-");
  chmodSync(dir, 0o755);
  const bin = join(dir, "aegis.mjs");
  const built = spawnSync(process.execPath, [join(ROOT, "scripts/bundle.mjs"), bin], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`scripts/bundle.mjs ${bin}: exit ${String(built.status)}: ${built.stderr}`);
  const mirror = join(dir, "mirror-server.mjs");
  copyFileSync(MIRROR, mirror);
  chmodSync(bin, 0o644);
  chmodSync(mirror, 0o644);
  forOthers = { bin, mirror };
  return forOthers;
}

export function openWriter(path: string): Promise<RecordWriter> {
  return RecordWriter.open(path, { key: KEY });
}

export type Line = Record<string, unknown> & { readonly line_type: string };

/** The record's Lines, parsed, in file order. */
export function linesOf(path: string): Line[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Line);
}

export function outcomes(path: string): Line[] {
  return linesOf(path).filter((l) => l.line_type === "outcome");
}

export async function verdictOf(path: string): Promise<string> {
  const v = await verifyRecord({ path }, { trust: [KEY.publicKeyHex] });
  return v.verdict.status;
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export const frame = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

export function call(id: unknown, name: string, args: Record<string, unknown> = {}): Buffer {
  return frame({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
}

export function result(id: unknown, value: unknown = { content: [] }): Buffer {
  return frame({ jsonrpc: "2.0", id, result: value });
}

/**
 * What a client's `callTool` returned for a call wrap refused (SPEC §17.3): a result with
 * `isError`, its text, and the facts under aegis-ts's `_meta` member. Throws when the result
 * is not such a refusal, so a call that ran fails the test.
 */
export function refusedResult(result: unknown): { readonly text: string; readonly aegis: Record<string, string> } {
  const r = result as { isError?: boolean; content?: { type: string; text?: string }[]; _meta?: Record<string, Record<string, string>> };
  const aegis = r._meta?.["io.github.aegis-ts/refusal"];
  if (r.isError !== true || aegis === undefined) throw new Error(`not a refusal: ${JSON.stringify(result)}`);
  return { text: r.content?.map((c) => c.text ?? "").join("") ?? "", aegis };
}
