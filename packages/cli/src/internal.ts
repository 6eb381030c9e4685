/**
 * `@aegis/cli/internal`: what the vector runner answers for a vector of each kind, and the
 * manifest's shape. The private generator (`packages/vectors-generator`) writes expected results
 * with this same answer, so a generated vector and `aegis vectors` cannot disagree on what it
 * means. For aegis's own packages: no promise of compatibility to anyone else.
 *
 * @packageDocumentation
 */
export { answerVector, type Ed25519Case } from "./vectors/run.js";
export { MANIFEST_SCHEMA } from "./vectors/manifest.js";
export { expireEntries, planExpiry } from "./envelope/expiry.js";
export type { Manifest, Vector, DecisionInput, RelayTranscript } from "./vectors/manifest.js";
