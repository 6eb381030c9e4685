import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnvelopeError, type EnvelopeFault } from "../../src/index.js";

export function tempDir(prefix = "aegis-envelope-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

/** The files under `dir` whose bytes contain `needle` anywhere. */
export function filesContaining(dir: string, needle: Uint8Array): string[] {
  return filesUnder(dir).filter((path) => readFileSync(path).includes(Buffer.from(needle)));
}

/** Where `needle` first occurs in the file, or fail. */
export function offsetIn(path: string, needle: Uint8Array): number {
  const at = readFileSync(path).indexOf(Buffer.from(needle));
  if (at < 0) throw new Error(`not found in ${path}`);
  return at;
}

/** XOR one byte of a file with 0x01. */
export function flipByte(path: string, offset: number): void {
  const bytes = readFileSync(path);
  bytes[offset] = (bytes[offset] ?? 0) ^ 0x01;
  writeFileSync(path, bytes);
}

export async function faultOf(promise: Promise<unknown>): Promise<EnvelopeFault> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EnvelopeError) return error.fault;
    throw error;
  }
  throw new Error("expected an EnvelopeError, got a result");
}

/** A value that is recognisable on disk and unlikely to occur by chance. */
export function marked(label: string, size = 64): Uint8Array {
  const head = `<<${label}>>`;
  return text(head.padEnd(Math.max(size, head.length), "."));
}
