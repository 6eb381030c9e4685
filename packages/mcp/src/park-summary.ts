import type { ApprovedScope } from "@aegis/format";
import type { Park } from "./parks.js";

/**
 * What the control socket's `list` shows of a parked call (SPEC §17.5): enough for a person
 * to see what they would approve (the tool, its arguments, the scope the `decision` would
 * record), bounded so that an agent cannot bury it under megabytes of arguments.
 */

/**
 * The most bytes of a parked call's arguments a `list` answer carries, per park (SPEC §17.5).
 * The canonical form is cut on a character boundary at or below it, and the full size is
 * given beside the cut, so that a person never takes a part for the whole.
 */
const MAX_LISTED_ARGUMENT_BYTES = 4096;

/**
 * A parked call's `params.arguments` as `list` shows them (SPEC §17.5); wire names.
 * `none`: the call carried none. `json`: their canonical form (§17.6), `json` holding at
 * most `MAX_LISTED_ARGUMENT_BYTES` bytes of it, cut only between two characters;
 * `bytes` is the whole form's size in UTF-8 bytes, and `truncated` says whether `json` is
 * less than all of it. `no_canonical_form`: a string in them holds a lone surrogate, or they
 * nest too deep to write; no retry can then run under an approval of the call.
 */
export type ListedArguments =
  | { readonly code: "none" }
  | { readonly code: "json"; readonly json: string; readonly bytes: number; readonly truncated: boolean }
  | { readonly code: "no_canonical_form" };

/** A call waiting for approval, as the control socket lists it (SPEC §17.5); wire names, as it is sent as JSON. */
export interface ParkSummary {
  /** The id to approve or deny it by (SPEC §15.7). */
  readonly approval_id: string;
  /** The tool the parked call named. */
  readonly tool_id: string;
  /** The `id` of the rule that parked it; `null` when the Policy Set's default did. */
  readonly rule: string | null;
  /** When it was parked: RFC 3339, UTC. */
  readonly parked_at: string;
  /** What it asked the tool to do, bounded. */
  readonly arguments: ListedArguments;
  /**
   * The scope an approval records in its `decision` (SPEC §17.5): the tool, and the paths
   * by access and the endpoint the call named, as wrap resolved them. An approval lets one
   * retry of this very call (the same tool and arguments) run, within it.
   */
  readonly scope: ApprovedScope;
}

/** A park as the control socket's `list` answers it. */
export function summarizePark(park: Park): ParkSummary {
  return {
    approval_id: park.approvalId,
    tool_id: park.toolId,
    rule: park.rule ?? null,
    parked_at: park.parkedAt.toISOString(),
    arguments: park.arguments.code === "json" ? listed(park.arguments.json, MAX_LISTED_ARGUMENT_BYTES) : park.arguments,
    scope: park.scope,
  };
}

/** `json`, cut to at most `limit` UTF-8 bytes without splitting a character. */
export function listed(json: string, limit: number): ListedArguments & { readonly code: "json" } {
  const bytes = Buffer.from(json, "utf8");
  if (bytes.length <= limit) return { code: "json", json, bytes: bytes.length, truncated: false };
  // The string is well-formed (it has a canonical form), so its UTF-8 is too, and it holds no
  // surrogate halves: backing off over continuation bytes (10xxxxxx) to the first byte of the
  // character the limit falls in keeps only whole characters.
  let end = limit;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return { code: "json", json: bytes.subarray(0, end).toString("utf8"), bytes: bytes.length, truncated: true };
}
