import { errnoOf, messageOf } from "./sync.js";

/**
 * The text of a file-system error as the reference prints it (Rust's `io::Error`), so that
 * `error: read <path>: ...` reads the same from both implementations.
 */
const RUST_TEXT: Readonly<Record<string, string>> = {
  ENOENT: "No such file or directory (os error 2)",
  EACCES: "Permission denied (os error 13)",
  EPERM: "Operation not permitted (os error 1)",
  EISDIR: "Is a directory (os error 21)",
  ENOTDIR: "Not a directory (os error 20)",
  ELOOP: "Too many levels of symbolic links (os error 40)",
  EMFILE: "Too many open files (os error 24)",
  EIO: "Input/output error (os error 5)",
  ENOSPC: "No space left on device (os error 28)",
  EROFS: "Read-only file system (os error 30)",
  EEXIST: "File exists (os error 17)",
};

export function describeIoError(error: unknown): string {
  const code = errnoOf(error);
  const text = code === undefined ? undefined : RUST_TEXT[code];
  return text ?? messageOf(error);
}
