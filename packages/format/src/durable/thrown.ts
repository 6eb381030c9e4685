/** Reading what was thrown, wherever the code runs (no Node API here). */

/** What was thrown, as an Error (a string or another value is wrapped). */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The message of what was thrown, whatever it was. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The errno code of a system error (`ENOENT`, `EEXIST`, ...), if it has one. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}
