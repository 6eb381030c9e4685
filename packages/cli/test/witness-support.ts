import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { BIN } from "./support.js";

/** `aegis witness serve` as a real process, with a key of its own; its URL and vkey once it listens. */
export interface RunningWitness {
  readonly url: string;
  readonly vkey: string;
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** A witness key in `dir/<name>.key` (made once), and its vkey. */
export function witnessKey(dir: string, name: string): { readonly key: string; readonly vkey: string } {
  const key = join(dir, `${name.replace(/\W/g, "_")}.key`);
  const made = spawnSync(process.execPath, [BIN, "witness", "keygen", "--out", key, "--name", name], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`witness keygen: ${made.stderr}`);
  return { key, vkey: made.stdout.trim() };
}

/** Start `aegis witness serve` with `key`, witnessing `logs` (`ORIGIN=KEY`), its state in `state`. */
export async function startWitness(key: string, logs: readonly string[], state: string, port = 0): Promise<RunningWitness> {
  const child = spawn(
    process.execPath,
    [BIN, "witness", "serve", "--key", key, ...logs.flatMap((l) => ["--log", l]), "--state", state, "--listen", `127.0.0.1:${port}`],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, AEGIS_DEBUG: "" },
    },
  );
  let said = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const found = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the witness did not start: ${said}`)), 30_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      const m = /serving (http:\/\/\S+)\/add-checkpoint as (\S+),/.exec(said);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    void exited.then(() => reject(new Error(`the witness exited: ${said}`)));
  });
  return { url: found[1] ?? "", vkey: found[2] ?? "", child, exited, stderr: () => said };
}
