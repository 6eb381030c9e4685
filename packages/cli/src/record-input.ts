import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { describeIoError } from "@aegis/format/internal";
import { describeFileKind, kindOf, type FileKind } from "@aegis/format/durable";
import { CliError } from "./fault.js";

/**
 * The record a command was given: a regular file, a pipe, or `-` for standard input (SPEC
 * §18). A directory, device or socket is refused before a byte is read: `/dev/zero` is an
 * endless record of one row, and would be read until killed.
 */
export interface RecordInput {
  /** What to open. */
  readonly path: string;
  /** How to name it to the user. */
  readonly shown: string;
  /** The size when it is a regular file (for progress, and to see it change); else undefined. */
  readonly size: number | undefined;
  readonly mtimeMs: number | undefined;
  /** Removes what was made to hold standard input, if anything. */
  readonly dispose: () => Promise<void>;
}

/** `-`: standard input. */
export const STDIN = "-";

/**
 * A record read once, streaming (`verify`): a file, a named pipe, or standard input, whose
 * `path` is then {@link STDIN}: read it from `process.stdin` (a socket, as a parent process
 * may give, cannot be opened by name).
 */
export async function streamedRecord(argument: string): Promise<RecordInput> {
  if (argument === STDIN) {
    const kind = await kindAt("/dev/stdin", "standard input");
    if (kind !== "file" && kind !== "fifo" && kind !== "socket") throw refusal("standard input", kind, true);
    return { path: STDIN, shown: "standard input", size: undefined, mtimeMs: undefined, dispose: noop };
  }
  const kind = await kindAt(argument, argument);
  if (kind !== "file" && kind !== "fifo") throw refusal(argument, kind, false);
  const info = await stat(argument);
  return { path: argument, shown: argument, size: kind === "file" ? info.size : undefined, mtimeMs: kind === "file" ? info.mtimeMs : undefined, dispose: noop };
}

/**
 * A record read by name (`show`, `recheck`: verify, then read again; the Envelope commands):
 * a regular file. Standard input is first copied to a private temporary file, so both
 * passes read the same bytes.
 */
export async function rereadableRecord(argument: string): Promise<RecordInput> {
  if (argument === STDIN) {
    const kind = await kindAt("/dev/stdin", "standard input");
    if (kind !== "file" && kind !== "fifo" && kind !== "socket") throw refusal("standard input", kind, true);
    const dir = await mkdtemp(join(tmpdir(), "aegis-stdin-"));
    const path = join(dir, "record.aarl");
    try {
      await pipeline(process.stdin, createWriteStream(path, { mode: 0o600 }));
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw new CliError({ code: "unreadable_record", path: "standard input", detail: describeIoError(error) });
    }
    const info = await stat(path);
    return { path, shown: "standard input", size: info.size, mtimeMs: info.mtimeMs, dispose: () => rm(dir, { recursive: true, force: true }) };
  }
  const kind = await kindAt(argument, argument);
  if (kind !== "file") throw refusal(argument, kind, false);
  const info = await stat(argument);
  return { path: argument, shown: argument, size: info.size, mtimeMs: info.mtimeMs, dispose: noop };
}

async function kindAt(path: string, shown: string): Promise<FileKind | "file"> {
  try {
    return kindOf(await stat(path));
  } catch (error) {
    throw new CliError({ code: "unreadable_record", path: shown, detail: describeIoError(error) });
  }
}

function refusal(shown: string, kind: FileKind, stdin: boolean): CliError {
  // A directory: in the reference's words, which a CI log may already be matched against.
  if (kind === "directory" && !stdin)
    return new CliError({ code: "unreadable_record", path: shown, detail: describeIoError(Object.assign(new Error(), { code: "EISDIR" })) });
  const what = describeFileKind(kind);
  const detail = stdin
    ? `standard input is ${what}: pipe a record into it (\`cat session.aarl | aegis ...\`) or give its path`
    : kind === "fifo"
      ? "a FIFO (named pipe): this command reads the record twice, so give it a regular file, or - to read standard input"
      : `${what}, not a record file: a record is a regular file (or a pipe, or - for standard input)`;
  return new CliError({ code: "unreadable_record", path: shown, detail });
}

async function noop(): Promise<void> {}
