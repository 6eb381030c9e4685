/**
 * The text of an I/O error as the reference prints it (Rust's `io::Error` display), so
 * that `error: read <path>: ...` reads the same from both implementations.
 */
const RUST_TEXT: Readonly<Record<string, string>> = {
  ENOENT: "No such file or directory (os error 2)",
  EACCES: "Permission denied (os error 13)",
  EISDIR: "Is a directory (os error 21)",
  ENOTDIR: "Not a directory (os error 20)",
  ELOOP: "Too many levels of symbolic links (os error 40)",
  EMFILE: "Too many open files (os error 24)",
  EIO: "Input/output error (os error 5)",
};

export function ioErrorText(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
    const text = RUST_TEXT[error.code];
    if (text !== undefined) return text;
  }
  return error instanceof Error ? error.message : String(error);
}
