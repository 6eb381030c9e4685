import { existsSync, realpathSync } from "node:fs";
import { delimiter, isAbsolute, join, relative } from "node:path";

/**
 * How a user runs this very aegis again from the current directory, for the commands it
 * tells them to run (the demo's): `aegis` where the `aegis` their shell finds on PATH is this
 * program, else `node <path to it>` (a checkout's bin, the one file dist/aegis.mjs). The
 * node_modules/.bin folders that npm and npx put on PATH for the run are not the user's
 * shell's: an `aegis` found only there is not one the user can type.
 */
export function invocation(): string {
  const script = process.argv[1];
  if (script === undefined) return "aegis";
  const self = realOrSelf(script);
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir === "" || /[\\/]node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
    const found = join(dir, "aegis");
    if (existsSync(found) && realOrSelf(found) === self) return "aegis";
  }
  return `node ${shellWord(displayPath(script))}`;
}

/** A path as short as it can be said from here: relative below the current directory, else absolute. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}

/** A word a POSIX shell reads back as itself. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
