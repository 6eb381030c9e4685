import { describeIoError } from "@aegis/format/internal";
import { readInputFile } from "@aegis/format/durable";
import { NoteFormatError, parseNote, readCheckpointText, type Checkpoint } from "@aegis/proof";
import { MAX_NOTE_BYTES } from "@aegis/proof/internal";
import { CliError } from "./fault.js";

/** A checkpoint or proof file, read whole under its bound (SPEC §18). */
export async function readProofInput(path: string, what: "checkpoint" | "proof"): Promise<Buffer> {
  try {
    return await readInputFile(path, what === "checkpoint" ? MAX_NOTE_BYTES : MAX_NOTE_BYTES * 2);
  } catch (error) {
    throw new CliError({ code: "unreadable_input", what, path, detail: describeIoError(error) });
  }
}

/** What a checkpoint file states, its signature not yet checked (that needs the record's key). */
export function statedCheckpoint(path: string, bytes: Buffer): Checkpoint {
  try {
    return readCheckpointText(parseNote(bytes).text);
  } catch (error) {
    if (error instanceof NoteFormatError) throw new CliError({ code: "unreadable_input", what: "checkpoint", path, detail: error.message });
    throw error;
  }
}
