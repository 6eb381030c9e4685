import { mkdir, chmod } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf } from "@aegis/format/internal";
import { acquireLockFile, readInputFile, replaceFileDurably } from "@aegis/format/durable";
import { decodeBase64 } from "../note.js";

/**
 * What a witness cosigned (SPEC §19.6): per origin, the size and root of the last tree. It is
 * on disk (`<dir>/state.json`, replaced whole: a crash leaves the old file or the new one,
 * synced) before the cosignature leaves, so a witness killed at any point and started again
 * never cosigns a tree that does not extend one it cosigned, nor another tree of one size.
 * One witness per directory: a lock file keeps a second out.
 */
export interface CosignedTree {
  readonly size: number;
  readonly root: Buffer;
}

const STATE = "state.json";
/** A state file holds a line per origin; a few MiB is thousands of logs. */
const MAX_STATE_BYTES = 16 * 1024 * 1024;

export class WitnessState {
  private constructor(
    private readonly file: string,
    private readonly trees: Map<string, CosignedTree>,
    private readonly release: () => Promise<void>,
  ) {}

  /**
   * Open (or make, mode 0700) the state directory and read what was cosigned.
   *
   * @throws Error when the directory is another witness's (locked), or its state cannot be read.
   */
  static async open(dir: string): Promise<WitnessState> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    const file = join(dir, STATE);
    const lock = await acquireLockFile(`${file}.lock`);
    if (!lock.ok)
      throw new Error(`${dir} is held by another witness${lock.holder === undefined ? "" : ` (process ${lock.holder.pid} on ${lock.holder.host})`}`);
    try {
      return new WitnessState(file, await readTrees(file), lock.release);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** The tree last cosigned for `origin`; undefined when none was. */
  cosigned(origin: string): CosignedTree | undefined {
    return this.trees.get(origin);
  }

  /** Keep `tree` as the last cosigned for `origin`, on disk, before anything is answered. */
  async record(origin: string, tree: CosignedTree): Promise<void> {
    const next = new Map(this.trees).set(origin, tree);
    const entries = Object.fromEntries([...next].sort(([a], [b]) => (a < b ? -1 : 1)).map(([o, t]) => [o, { size: t.size, root: t.root.toString("base64") }]));
    await replaceFileDurably(this.file, Buffer.from(`${JSON.stringify({ schema: "aegis.witness-state/1", origins: entries }, null, 1)}\n`));
    this.trees.set(origin, tree);
  }

  async close(): Promise<void> {
    await this.release();
  }
}

async function readTrees(file: string): Promise<Map<string, CosignedTree>> {
  let bytes: Buffer;
  try {
    bytes = await readInputFile(file, MAX_STATE_BYTES);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return new Map();
    throw error;
  }
  const bad = (detail: string): never => {
    throw new Error(`${file} is not a witness's state: ${detail}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    return bad("not JSON");
  }
  const origins = typeof parsed === "object" && parsed !== null && "origins" in parsed ? parsed.origins : undefined;
  if (typeof origins !== "object" || origins === null) return bad("no origins");
  const trees = new Map<string, CosignedTree>();
  for (const [origin, value] of Object.entries(origins)) {
    const size: unknown = typeof value === "object" && value !== null && "size" in value ? value.size : undefined;
    const root: unknown = typeof value === "object" && value !== null && "root" in value ? value.root : undefined;
    const hash = typeof root === "string" ? decodeBase64(root) : undefined;
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0 || hash === undefined || hash.length !== 32) return bad(`origin ${origin}`);
    trees.set(origin, { size, root: hash });
  }
  return trees;
}
