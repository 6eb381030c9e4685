/**
 * `@aegis/format/durable`: what the Chain writer and the Envelope store both need to keep
 * bytes safe across a crash (ADR 0004, ADR 0007): group commit, fsync of files and
 * directories, durable replacement of a file, directories made one level at a time, the lock
 * file, and one reading of the errors the file system throws.
 */
export { GroupCommit, type CommitTarget, type Urgency } from "./group-commit.js";
export { asError, errnoOf, messageOf, syncDirectory, syncNow, syncOffThread } from "./sync.js";
export { makeDirectories, pathExists, readFully, replaceFileDurably } from "./files.js";
export { InputFileError, readInputFile } from "./input-file.js";
export { acquireLock, acquireLockFile, lockPathFor, processRuns, type LockHolder, type LockResult, type RecoveredLock } from "./lock.js";
