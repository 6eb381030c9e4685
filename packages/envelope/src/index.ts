/**
 * @aegis/envelope: the verbatim request and response bytes of calls, content-addressed by
 * the digest the record holds (SPEC §9, §14). A live store for the process that writes,
 * read-only access to a store or a pack for everyone else, and packs to hand over.
 *
 * For: operators and tools that keep, read, redact or pack the verbatim bytes of recorded calls.
 */
export { EnvelopeStore, type EnvelopeStoreOptions } from "./store.js";
export { type EntryDigest, type EnvelopeEntry, type EnvelopeRead, type EnvelopeSource, type EnvelopeStats } from "./source.js";
export { type RedactOutcome } from "./redaction.js";
export { openEnvelope } from "./open.js";
export { writePack, type PackOptions, type PackReport } from "./pack-write.js";
export { checkEnvelope, type EnvelopeCheck } from "./check.js";
export { describeDamage, type EnvelopeDamage } from "./damage.js";
export { EnvelopeError, type EnvelopeFault } from "./errors.js";
