import type { Vector } from "@aegis/vectors/oracle";

/**
 * What the generator builds: every vector's files (path relative to `vectors/` → bytes)
 * and its manifest entry, in a fixed order. Nothing here reads a clock or a random
 * source, so two runs give the same bytes (the test that compares them with the
 * committed files depends on it).
 */
export class VectorSet {
  readonly files = new Map<string, Uint8Array>();
  readonly vectors: Vector[] = [];

  file(path: string, content: Uint8Array | string): string {
    if (this.files.has(path)) throw new Error(`two vectors write ${path}`);
    this.files.set(path, typeof content === "string" ? new TextEncoder().encode(content) : content);
    return path;
  }

  add(vector: Vector): void {
    if (this.vectors.some((v) => v.id === vector.id)) throw new Error(`two vectors are called ${vector.id}`);
    this.vectors.push(vector);
  }
}

/** `positive` when the implementation must accept, `negative` when it must refuse or flag. */
export type Polarity = "positive" | "negative";
