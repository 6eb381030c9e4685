import { unmatched } from "@aegis/format/internal";
import { EnvelopeError, EnvelopeStore, openEnvelope, type EnvelopeDamage, type EnvelopeSource } from "@aegis/envelope";
import { match } from "ts-pattern";
import { CliError } from "../fault.js";

/** Open a store or pack to read; its faults become CLI faults (exit 2). */
export async function openSource(path: string): Promise<EnvelopeSource> {
  return envelopeFaults(() => openEnvelope(path));
}

/** Open an existing store as its one writer (for redaction): never creates one. */
export async function openStore(path: string): Promise<EnvelopeStore> {
  return envelopeFaults(() => EnvelopeStore.open(path, { create: false }));
}

/** Create (or reopen) a store as its one writer: the demo's. */
export async function createStore(path: string): Promise<EnvelopeStore> {
  return envelopeFaults(() => EnvelopeStore.open(path));
}

export async function envelopeFaults<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof EnvelopeError) throw new CliError({ code: "envelope", fault: error.fault });
    throw error;
  }
}

/**
 * Damage that cost entries or may have (SPEC §14.7), as against bookkeeping. An index that
 * was rebuilt or not written loses nothing, because the segments are the truth; a torn tail
 * is a put that was never acknowledged (SPEC §14.5), or one a live writer is making now.
 */
export function isLoss(damage: EnvelopeDamage): boolean {
  return match(damage)
    .with({ code: "damaged_frame" }, { code: "damaged_header" }, { code: "missing_segment" }, { code: "not_regular_file" }, () => true)
    .with({ code: "torn_tail" }, { code: "index_rebuilt" }, { code: "index_not_written" }, () => false)
    .exhaustive(unmatched);
}
