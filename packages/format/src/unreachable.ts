/**
 * The one handler for ts-pattern's `.exhaustive(...)` (CONTRIBUTING.md): its default message
 * prints the input, which can carry record content (tool ids, paths, reasons, bytes).
 * Reaching this is a bug in the build: the checker proved every variant handled.
 */
export function unreachable(value: unknown): never {
  void value;
  throw new Error("unreachable: a variant was not handled");
}
