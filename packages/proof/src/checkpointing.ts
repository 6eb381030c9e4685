import { RecordWriter, type AppendedLine, type RecordWriterOptions, type SigningKey } from "@aegis/format";
import { messageOf } from "@aegis/format/internal";
import { replaceFileDurably } from "@aegis/format/durable";
import { signCheckpoint } from "./checkpoint.js";
import { leafHash, type TreeHasher } from "./merkle.js";
import { defaultOrigin, recordTree } from "./record-tree.js";
import type { NoteVerifier } from "./keys.js";
import type { PushResult } from "./witness/push.js";
import { Witnessing } from "./witness/witnessing.js";

/**
 * A writer that checkpoints its own record (SPEC §19.5): every `everyLines` durable Lines,
 * `everyMs` after the last Line when any is not yet covered, and at close, it signs a
 * checkpoint of every Line on disk and replaces the sidecar `<record>.checkpoint` with it,
 * durably. A crash then leaves the record's tail anchored up to the last checkpoint; a copy
 * of each checkpoint sent elsewhere (`onCheckpoint`) later shows a record cut short.
 */

/** How often, where, and under what origin. */
export interface CheckpointingOptions {
  /** Checkpoint once this many Lines are durable since the last checkpoint (default 1000). */
  readonly everyLines?: number;
  /** Checkpoint this long after a Line no checkpoint covers yet (default 1000 ms); 0 for none. */
  readonly everyMs?: number;
  /** The checkpoints' origin (default: the record's, from its first Line). */
  readonly origin?: string;
  /** Where the latest checkpoint is kept (default `<record>.checkpoint`). */
  readonly sidecar?: string;
  /** Told of each checkpoint once the sidecar holds it: ship it to where the record is not. */
  readonly onCheckpoint?: (note: string, size: number) => void;
  /** Told of a checkpoint that could not be written; the record is unaffected. Default: ignored. */
  readonly onError?: (error: Error) => void;
  /**
   * Witnesses to push each checkpoint to, in the background (SPEC §19.6): its verifier key
   * (type 0x04) and the prefix its `add-checkpoint` is under. What each last cosigned is kept
   * in `<record>.witnesses`; after the close, the sidecar carries the final checkpoint's
   * cosignatures.
   */
  readonly witnesses?: readonly { readonly verifier: NoteVerifier; readonly url: string }[];
  /** Told of each push's end: a cosignature, evidence against the record, or a fault. */
  readonly onWitness?: (result: PushResult) => void;
}

/** A writer with its checkpoints. Close it, not its writer, so the last checkpoint covers the close. */
export interface CheckpointedWriter {
  /** The writer: append through it as usual. */
  readonly writer: RecordWriter;
  /** The path of the sidecar. */
  readonly sidecar: string;
  /** The latest checkpoint written, if any. */
  latest(): string | undefined;
  /** Checkpoint every durable Line now, if any is not yet covered. */
  checkpoint(): Promise<string | undefined>;
  /** Close the writer (a signed `close`), then write the final checkpoint, covering it. */
  close(): Promise<string | undefined>;
}

/**
 * Open `path` for writing, as `RecordWriter.open` does, with checkpoints. The tree of
 * the Lines already in the file is rebuilt by walking it once (the verifier's walk).
 *
 * @throws what `RecordWriter.open` throws; RangeError when the file does not verify as far as
 * it goes (a Tampered record is not checkpointed).
 */
export async function openCheckpointedWriter(
  path: string,
  writerOptions: RecordWriterOptions,
  options: CheckpointingOptions = {},
): Promise<CheckpointedWriter> {
  let checkpointer: Checkpointer | undefined;
  const writer = await RecordWriter.open(path, {
    ...writerOptions,
    onLine: (line) => {
      checkpointer?.line(line);
      writerOptions.onLine?.(line);
    },
  });
  try {
    // The open Line is durable and in the file: the walk sees it and every Line before it.
    const walked = await recordTree(path);
    if (walked.verification.verdict.status === "tampered") throw new RangeError(`${path} is Tampered; it is not checkpointed`);
    const witnessing =
      options.witnesses === undefined || options.witnesses.length === 0
        ? undefined
        : await Witnessing.open(options.witnesses, path, walked.tree, options.onWitness ?? (() => undefined));
    checkpointer = new Checkpointer(writerOptions.key, walked.tree, options.origin ?? defaultOrigin(walked.firstLineHash), options, path, witnessing);
  } catch (error) {
    await writer.close().catch(() => undefined);
    throw error;
  }
  const active = checkpointer;
  return {
    writer,
    sidecar: active.sidecar,
    latest: () => active.latest,
    checkpoint: () => active.checkpoint(),
    close: async () => {
      try {
        await writer.close();
      } finally {
        active.stop();
      }
      const last = await active.checkpoint();
      return last === undefined ? last : active.cosigned(last);
    },
  };
}

/** How long the close waits for the witnesses' cosignatures of the final checkpoint. */
const SETTLE_MS = 15_000;

class Checkpointer {
  readonly sidecar: string;
  latest: string | undefined;
  private readonly everyLines: number;
  private readonly everyMs: number;
  /** The tree of every Line appended, durable or not. */
  private readonly tree: TreeHasher;
  /** The tree of the Lines known durable, in order. */
  private durable: TreeHasher;
  private covered: number;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<string | undefined> = Promise.resolve(undefined);
  private stopped = false;

  constructor(
    private readonly key: SigningKey,
    tree: TreeHasher,
    private readonly origin: string,
    private readonly options: CheckpointingOptions,
    path: string,
    private readonly witnessing: Witnessing | undefined,
  ) {
    this.tree = tree;
    this.durable = tree.snapshot();
    this.covered = 0;
    this.sidecar = options.sidecar ?? `${path}.checkpoint`;
    this.everyLines = options.everyLines ?? 1000;
    this.everyMs = options.everyMs ?? 1000;
    if (!Number.isSafeInteger(this.everyLines) || this.everyLines < 1) throw new RangeError("everyLines is a whole number of Lines, at least 1");
  }

  /** A Line appended: into the tree now, into the durable tree once it is on disk. */
  line(line: AppendedLine): void {
    const leaf = leafHash(line.text);
    this.tree.add(leaf);
    this.witnessing?.leaf(leaf);
    const upTo = this.tree.snapshot();
    void line.durable.then((ok) => {
      // Durability comes in order (one group commit after another); keep the largest.
      if (!ok || upTo.size <= this.durable.size) return;
      this.durable = upTo;
      if (this.durable.size - this.covered >= this.everyLines) void this.checkpoint();
      else this.arm();
    });
  }

  private arm(): void {
    if (this.stopped || this.everyMs === 0 || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.checkpoint();
    }, this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One checkpoint at a time, of every durable Line, if any is not yet covered. */
  checkpoint(): Promise<string | undefined> {
    this.writing = this.writing.then(async () => {
      const tree = this.durable;
      if (tree.size === 0 || tree.size <= this.covered) return this.latest;
      const note = signCheckpoint({ origin: this.origin, size: tree.size, root: tree.root(), extensions: [] }, this.key);
      try {
        await replaceFileDurably(this.sidecar, Buffer.from(note, "utf8"));
      } catch (error) {
        this.options.onError?.(new Error(`checkpoint ${this.sidecar}: ${messageOf(error)}`, { cause: error }));
        return this.latest;
      }
      this.covered = tree.size;
      this.latest = note;
      this.options.onCheckpoint?.(note, tree.size);
      this.witnessing?.push(note, tree.size);
      return note;
    });
    return this.writing;
  }

  /**
   * The final checkpoint with the witnesses' cosignatures of it, written to the sidecar: the
   * pushes are waited for, within {@link SETTLE_MS}; those that did not cosign are left out.
   */
  async cosigned(note: string): Promise<string> {
    if (this.witnessing === undefined) return note;
    const witnessing = this.witnessing;
    let timer: NodeJS.Timeout | undefined;
    const lines = await Promise.race([
      witnessing.settle(this.covered),
      new Promise<string[]>((resolve) => (timer = setTimeout(() => resolve([]), SETTLE_MS))),
    ]).finally(() => clearTimeout(timer));
    if (lines.length === 0) return note;
    const whole = `${note}${lines.join("")}`;
    try {
      await replaceFileDurably(this.sidecar, Buffer.from(whole, "utf8"));
    } catch (error) {
      this.options.onError?.(new Error(`checkpoint ${this.sidecar}: ${messageOf(error)}`, { cause: error }));
      return note;
    }
    this.latest = whole;
    return whole;
  }
}
