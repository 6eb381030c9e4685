/**
 * `@aegis/cli/vectors`: what the vector runner answers for each vector kind, and the manifest's
 * shape. The private generator (`packages/vectors-generator`) writes expected results with these
 * same answers, so a generated vector and `aegis vectors` cannot disagree on what it means.
 */
export { runVector, canonicalAnswer, chainAnswer, ed25519Answer, envelopeAnswer, policyAnswer, recheckAnswer, relayAnswer } from "./run.js";
export type { VectorResult, Ed25519Case } from "./run.js";
export { MANIFEST_SCHEMA, readManifest } from "./manifest.js";
export type {
  Manifest,
  Vector,
  VectorKind,
  VectorHeader,
  CanonicalExpected,
  ChainExpected,
  EnvelopeExpected,
  DecisionInput,
  PolicyExpected,
  RecheckExpected,
  RelayEvent,
  RelayTranscript,
  RelayExpected,
} from "./manifest.js";
