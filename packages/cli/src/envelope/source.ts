import { EnvelopeError, EnvelopeStore, openEnvelope, type EnvelopeSource } from "@aegis/envelope";
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
