import { join } from "node:path";
import { SigningKey } from "@aegis/format";
import { TreeHasher, leafHash, parseVerifierKey, pushCheckpoint, signCheckpoint, type PushResult } from "@aegis/proof";
import { describe, expect, it } from "vitest";
import { tempDir } from "./support.js";
import { startWitness, witnessKey } from "./witness-support.js";

/**
 * `aegis witness serve` SIGKILLed at random while checkpoints are pushed to it, then started
 * again on its state (SPEC §19.6, [M19.2]): it never cosigns two trees of one size, never one
 * that does not extend another it cosigned, and never one smaller than it had cosigned before
 * it was killed; afterwards, a push from size 0 is answered 409 with the size it holds.
 * `AEGIS_CRASH_ROUNDS` makes a longer run; `AEGIS_CRASH_SEED` repeats one.
 */
const ROUNDS = Number(process.env["AEGIS_CRASH_ROUNDS"] ?? "12");
const SEED = Number(process.env["AEGIS_CRASH_SEED"] ?? String(Date.now() % 1_000_000));
const ORIGIN = "example.org/aegis/crash";

/** A small deterministic generator, so that a failing run can be repeated by its seed. */
function random(seed: number): () => number {
  let x = seed | 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** The root of leaves [start, end). */
function rootOf(leaves: readonly Buffer[], start: number, end: number): Buffer {
  const tree = new TreeHasher();
  for (const leaf of leaves.slice(start, end)) tree.add(leaf);
  return tree.root();
}

/** RFC 9162 §2.1.4.1, PROOF(m, D[0:n]), written here on its own from the RFC's text. */
function consistency(leaves: readonly Buffer[], m: number, n: number): Buffer[] {
  const sub = (m: number, start: number, end: number, whole: boolean): Buffer[] => {
    const size = end - start;
    if (m === size) return whole ? [] : [rootOf(leaves, start, end)];
    let k = 1;
    while (k * 2 < size) k *= 2;
    return m <= k
      ? [...sub(m, start, start + k, whole), rootOf(leaves, start + k, end)]
      : [...sub(m - k, start + k, end, false), rootOf(leaves, start, start + k)];
  };
  return m === 0 || m === n ? [] : sub(m, 0, n, true);
}

describe("aegis witness serve, SIGKILLed at random while pushed to", () => {
  it(`[M19.2] never cosigns two trees of one size, a forked one, or a smaller one (${ROUNDS} rounds, seed ${SEED})`, async () => {
    const next = random(SEED);
    const dir = tempDir();
    const log = SigningKey.fromSeed(new Uint8Array(32).fill(3));
    const { key } = witnessKey(dir, "witness.example/crash");
    const state = join(dir, "state");
    // Two histories of one log: the honest one, and a fork that shares its first 5 Lines.
    const honest = Array.from({ length: 400 }, (_, i) => leafHash(`line-${i}`));
    const forked = honest.map((leaf, i) => (i < 5 ? leaf : leafHash(`forked-${i}`)));
    const cosigned: { history: "honest" | "forked"; size: number; root: string; round: number }[] = [];
    let held = 0;
    let floor = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const witness = await startWitness(key, [`${ORIGIN}=${log.publicKeyHex}`], state);
      const target = { verifier: parseVerifierKey(witness.vkey), url: witness.url };
      const pushes: Promise<void>[] = [];
      for (let p = 0; p < 6; p++) {
        const history = next() < 0.75 ? "honest" : "forked";
        const leaves = history === "honest" ? honest : forked;
        const size = Math.min(leaves.length, held + 1 + Math.floor(next() * 12));
        const note = signCheckpoint({ origin: ORIGIN, size, root: rootOf(leaves, 0, size), extensions: [] }, log);
        pushes.push(
          pushCheckpoint(note, target, (old) => Promise.resolve(consistency(leaves, old, size)), held, 5_000).then((result: PushResult) => {
            if (result.code !== "cosigned") return;
            cosigned.push({ history, size, root: rootOf(leaves, 0, size).toString("base64"), round });
            held = Math.max(held, size);
          }),
        );
      }
      const delay = Math.floor(next() * 120);
      // The first round's pushes are answered before the kill: on a busy machine a push can take
      // longer than every random delay, and a run that cosigned nothing would prove nothing.
      if (round === 0) await Promise.all(pushes);
      else await new Promise((resolve) => setTimeout(resolve, delay));
      witness.child.kill("SIGKILL");
      await witness.exited;
      await Promise.all(pushes);
      // Whatever was cosigned before the kill was on disk before it was answered.
      for (const c of cosigned.filter((c) => c.round === round)) expect(c.size, `seed ${SEED}`).toBeGreaterThanOrEqual(floor);
      floor = Math.max(floor, ...cosigned.map((c) => c.size));
    }
    // One root per size; never both histories past the Lines they share.
    const bySize = new Map<number, Set<string>>();
    for (const c of cosigned) bySize.set(c.size, (bySize.get(c.size) ?? new Set()).add(c.root));
    for (const [size, roots] of bySize) expect(roots.size, `size ${size}, seed ${SEED}`).toBe(1);
    const past = (h: string): boolean => cosigned.some((c) => c.history === h && c.size > 5);
    expect(past("honest") && past("forked"), `seed ${SEED}`).toBe(false);
    expect(cosigned.length, `seed ${SEED}: nothing was cosigned`).toBeGreaterThan(0);

    // Started again, it says the size it holds to a push from 0.
    const witness = await startWitness(key, [`${ORIGIN}=${log.publicKeyHex}`], state);
    try {
      const leaves = past("forked") ? forked : honest;
      const note = signCheckpoint({ origin: ORIGIN, size: 399, root: rootOf(leaves, 0, 399), extensions: [] }, log);
      const answer = await fetch(`${witness.url}/add-checkpoint`, { method: "POST", body: `old 0\n\n${note}` });
      expect(answer.status).toBe(409);
      expect(answer.headers.get("content-type")).toBe("text/x.tlog.size");
      const holds = Number((await answer.text()).trim());
      expect(holds, `seed ${SEED}`).toBeGreaterThanOrEqual(floor);
    } finally {
      witness.child.kill("SIGTERM");
      await witness.exited;
    }
  }, 240_000);
});
