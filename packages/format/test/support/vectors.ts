import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The repository's `vectors/` directory, which third parties run too. */
export const VECTORS = fileURLToPath(new URL("../../../../vectors/", import.meta.url));

export function vectorPath(relative: string): string {
  return `${VECTORS}${relative}`;
}

export function readVector(relative: string): Buffer {
  return readFileSync(vectorPath(relative));
}

export function readVectorJson<T>(relative: string): T {
  return JSON.parse(readVector(relative).toString("utf8")) as T;
}

export const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, "hex"));
