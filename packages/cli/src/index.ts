/**
 * `@aegis/cli`: the `aegis` command. Most users run it (`npx @aegis/cli verify ...`); a
 * program that embeds it calls {@link main} with the arguments it would pass.
 *
 * @packageDocumentation
 */
export { main } from "./main.js";
