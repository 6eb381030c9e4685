/**
 * `@aegis/envelope/internal`: what aegis's own packages share about an Envelope beside a record:
 * the digests a record names and what a source holds for each, which damage loses entries, and
 * expiry under records (SPEC §14.12). The CLI's commands and the vector oracle
 * (`@aegis/vectors/oracle`) use them, so that a vector and the command it stands for cannot
 * disagree. No promise of compatibility to anyone else; the public API is `@aegis/envelope`.
 *
 * @packageDocumentation
 */
export { checkRecordAgainst, digestReferences, exitCodeOfEnvelopeCheck, type EnvelopeTally, type ReferenceCheck } from "./record-references.js";
export { isLoss } from "./damage.js";
export { expire } from "./expiry.js";
/**
 * Here so that the CLI can word an Envelope's fault in every command without loading the store
 * and cbor-x (some 35 modules) where no Envelope is read; a library user has the same words
 * as an EnvelopeError's message.
 */
export { describeEnvelopeFault, type EnvelopeFault } from "./errors.js";
/** The CLI refuses a longer `--reason` before it opens a store; the store refuses it too. */
export { MAX_REASON_BYTES } from "./layout.js";
