/**
 * `@aegis/cli`: the `aegis` command. Most users run it (`aegis verify ...`, from this
 * package's bin or the one file `aegis.mjs`); a program that embeds it calls {@link main}
 * with the arguments it would pass.
 *
 * For: people and CI jobs, through the `aegis` command; `main` runs it in-process.
 *
 * @packageDocumentation
 */
export { main } from "./main.js";
