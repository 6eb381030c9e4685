import { readFileSync } from "node:fs";

/** This aegis's version, as its package.json says (`aegis --version`, and a report's provenance). */
export const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
