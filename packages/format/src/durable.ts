/**
 * `@aegis/format/durable`: the durable-file layer of ADR 0004 that a store beside a record
 * builds on, as the Envelope store does: group commit and fsync, files replaced whole, regular
 * files opened without following a FIFO or a device, bounded input reads, and lock files whose
 * holder is known to be alive or dead.
 *
 * @packageDocumentation
 */
export { GroupCommit, type CommitTarget } from "./durable/group-commit.js";
export { syncDirectory, syncFile } from "./durable/sync.js";
export { PRIVATE_FILE_MODE, makeDirectories, replaceFileDurably } from "./durable/files.js";
export { openRegularFd, openRegularFile, openRegularFileSync } from "./durable/regular-file.js";
export { InputFileError, describeFileKind, kindOf, readInputFile, type FileKind, type InputFileFault } from "./durable/input-file.js";
export { acquireLockFile, processRuns, processStart, type LockResult } from "./durable/lock.js";
