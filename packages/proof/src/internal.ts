/**
 * `@aegis/proof/internal`: what the CLI takes from the proof package to refuse bad input before
 * it reads or signs anything: the note size bound and the key-name rule of C2SP signed notes.
 * The public functions refuse the same input with errors of their own. No promise of
 * compatibility to anyone else; the public API is `@aegis/proof` (ADR 0030).
 *
 * @packageDocumentation
 */
export { MAX_NOTE_BYTES, isKeyName } from "./note.js";
