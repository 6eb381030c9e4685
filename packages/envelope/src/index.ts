/**
 * @aegis/envelope: the verbatim request and response bytes of calls, content-addressed by
 * the digest the Chain records (SPEC §9, §14). A live store for the process that writes,
 * read-only access to a store or a pack for everyone else, and packs to hand over.
 */
export { EnvelopeStore, type EnvelopeStoreOptions } from "./store.js";
export { type EntryDigest, type EnvelopeEntry, type EnvelopeRead, type EnvelopeSource, type EnvelopeStats } from "./source.js";
export { type RedactOutcome, type RedactOutcomeCode } from "./redaction.js";
export { openEnvelope } from "./open.js";
export { writePack, type PackOptions, type PackReport } from "./pack-write.js";
export { checkEnvelope, type EnvelopeCheck } from "./check.js";
export { describeDamage, type EnvelopeDamage, type EnvelopeDamageCode } from "./damage.js";
export { EnvelopeError, describeEnvelopeFault, type EnvelopeFault, type EnvelopeFaultCode } from "./errors.js";
export { DEFAULT_SEGMENT_BYTES, FORMAT_VERSION, MAX_ENTRY_BYTES, MAX_REASON_BYTES } from "./layout.js";
