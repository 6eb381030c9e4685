/**
 * `@aegis/vectors/oracle`: what aegis-ts answers for a vector of each kind, one function keyed
 * by the kind, `answerVector({ kind, ... })`, and the manifest's shape (SPEC §11.4).
 * `aegis vectors` compares these answers with the expected ones, and the private generator
 * (`packages/vectors-generator`) writes the expected ones with this same function, so a
 * generated vector and the runner cannot disagree on what it means. It lives beside the
 * vectors so that the generator needs no CLI. For aegis's own packages: no promise of
 * compatibility to anyone else. It needs the other `@aegis/*` packages of its version, which
 * the CLI brings; the vectors' data needs none of them.
 *
 * @packageDocumentation
 */
export { answerVector, type Ed25519Case } from "./run.js";
export { runVectors } from "./run-vectors.js";
export { MANIFEST_SCHEMA } from "./manifest.js";
export type { Manifest, Vector, DecisionInput, RelayTranscript } from "./manifest.js";
