/**
 * The handler for `.exhaustive(...)`: ts-pattern's default message prints the input, which
 * can carry record content (tool ids, paths, reasons). Reaching this is a bug in the build.
 */
export function unreachable(value: unknown): never {
  void value;
  throw new Error("unreachable: a variant was not handled");
}
