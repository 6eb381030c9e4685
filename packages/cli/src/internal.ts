/**
 * `@aegis/cli/internal`: what the vector runner answers for each vector kind, and the manifest's
 * shape. The private generator (`packages/vectors-generator`) writes expected results with these
 * same answers, so a generated vector and `aegis vectors` cannot disagree on what it means. For
 * aegis's own packages: no promise of compatibility to anyone else.
 *
 * @packageDocumentation
 */
export {
  canonicalAnswer,
  chainAnswer,
  checkpointedAnswer,
  ed25519Answer,
  envelopeAnswer,
  policyAnswer,
  proofAnswer,
  recheckAnswer,
  relayAnswer,
} from "./vectors/run.js";
export type { Ed25519Case } from "./vectors/run.js";
export { MANIFEST_SCHEMA } from "./vectors/manifest.js";
export { expireEntries, planExpiry, type Expired } from "./envelope/expiry.js";
export type { Manifest, Vector, DecisionInput, RelayEvent, RelayTranscript } from "./vectors/manifest.js";
