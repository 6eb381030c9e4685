import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

/** Children run the built packages: refuse to test an older build than the sources. */
export function assertBuilt(...packages: readonly string[]): void {
  for (const name of packages) {
    const dir = join(ROOT, "packages", name);
    const built = statSync(join(dir, "dist", ".tsbuildinfo")).mtimeMs;
    const newest = Math.max(...sourcesOf(join(dir, "src")).map((f) => statSync(f).mtimeMs));
    if (newest > built) throw new Error(`packages/${name}/dist is older than its sources: run \`npx tsc -b\` first`);
  }
}

function sourcesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourcesOf(join(dir, e.name)) : [join(dir, e.name)]));
}

/**
 * Run `script` with `args`, pass each whole stdout line to `onLine`, and SIGKILL the child
 * as soon as `onLine` returns true, or calls the `kill` it is given (say, from a timer), or
 * after `afterMs`, when given. Resolves with every
 * whole line it printed; a line cut short by the kill was acknowledged to no one.
 */
export function runUntilKilled(
  script: string,
  args: readonly string[],
  onLine: (line: string, count: number, kill: () => void) => boolean,
  afterMs?: number,
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let killed = false;
    let seen = 0;
    const kill = (): void => {
      if (killed) return;
      killed = true;
      child.kill("SIGKILL");
    };
    const timer = afterMs === undefined ? undefined : setTimeout(kill, afterMs);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      const lines = out.split("\n").slice(0, -1);
      while (!killed && seen < lines.length) {
        seen++;
        if (onLine(lines[seen - 1] ?? "", seen, kill)) kill();
      }
    });
    child.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (signal !== "SIGKILL") return reject(new Error(`the child ended by itself (${String(code)}): ${err}`));
      resolve(out.split("\n").slice(0, -1));
    });
  });
}

/** A small seeded generator, so that a failing round can be run again (`seed` is printed). */
export function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}
