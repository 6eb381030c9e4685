/**
 * The impossible branch of a checked `switch` (CONTRIBUTING.md): `default: return unreachable(x)`.
 * It takes `never`, so a union that gains a member the switch does not name no longer compiles
 * (packages/format/test/exhaustive-build.test.ts plants one). Its message does not print the
 * value, which can carry record content (tool ids, paths, reasons, bytes).
 */
export function unreachable(value: never): never {
  void value;
  throw new Error("unreachable: a variant was not handled");
}

/**
 * The one handler for ts-pattern's `.exhaustive(...)` (CONTRIBUTING.md). The match itself is
 * the compile-time check: `.exhaustive` has no call signature until every variant is handled.
 * ts-pattern types this handler's argument `unknown`, because it runs only when a value the
 * types described wrongly reaches the match at run time, so it cannot take `never` as
 * `unreachable` does. It replaces ts-pattern's default, whose message prints the input.
 */
export function unmatched(value: unknown): never {
  void value;
  throw new Error("unreachable: a value matched no pattern");
}
