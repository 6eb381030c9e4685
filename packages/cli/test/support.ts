import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const BIN = join(ROOT, "packages/cli/bin/aegis.js");
export const vector = (relative: string): string => join(ROOT, "vectors", relative);
export const GOLDEN = vector("external/rust-aegis/golden-session.aarl");
export const GOLDEN_PUBLIC_KEY = "3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c";
export const GOLDEN_KEY_ID = "77a2c2f5952039243c043b69e7e812a2deb69e3271adb3013b8f24d3b8ea40f6";

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real CLI, as a child process, the way a CI gate runs it. */
export function aegis(args: readonly string[], options: { cwd?: string } = {}): Run {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, encoding: "utf8", env: { ...process.env, AEGIS_DEBUG: "" } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "aegis-cli-"));
}

/** A stack trace printed to a user looks like this; none may ever appear. */
export const STACK_TRACE = /^\s+at .+\(.+:\d+:\d+\)$|^\s+at .+:\d+:\d+$/m;
