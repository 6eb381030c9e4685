import { canonicalJson } from "./canonical-json.js";
import { isRecord, type Json, type JsonRecord } from "./message.js";

/**
 * The rounds of one `tools/call` in MCP 2026-07-28 (SPEC §17.2). A server that needs the
 * client's input before a tool completes answers the call with a result whose `resultType` is
 * `input_required` (the questions in `inputRequests`, its own `requestState`); the client
 * asks its user, then makes the call again, a new request with a new id, with the same tool
 * and arguments, the answers in `params.inputResponses` and the `requestState` echoed. Each
 * round is a Call of its own, decided by the Policy Set on its own arguments; the later
 * round's `outcome` names the earlier one in `continues_call`.
 */

/** A round whose answer asked for input, waiting for the call that continues it. */
interface OpenRound {
  readonly callId: string;
  readonly toolId: string;
  /** The canonical form of the round's `params.arguments` (SPEC §17.6), or `null` for none. */
  readonly args: string | undefined;
  readonly requestState: string | undefined;
}

/** Rounds kept waiting at most: a server that keeps asking cannot make wrap keep them all. */
const MAX_OPEN_ROUNDS = 1024;

export class Rounds {
  private open: OpenRound[] = [];

  /**
   * A call was answered. When the answer asks for input, the call may be continued: keep it,
   * with what its continuation must repeat.
   */
  answered(callId: string, toolId: string, request: JsonRecord, answer: JsonRecord): void {
    const result = answer["result"];
    if (!isRecord(result) || result["resultType"] !== "input_required") return;
    const state = result["requestState"];
    this.open.push({ callId, toolId, args: argumentsOf(request), requestState: typeof state === "string" ? state : undefined });
    if (this.open.length > MAX_OPEN_ROUNDS) this.open.shift();
  }

  /**
   * The `call_id` of the round this call continues, taken so that no other call continues
   * it: the one round open with the same tool, the same arguments and the same
   * `requestState` (both absent, or equal). None when the call carries neither
   * `inputResponses` nor `requestState`, and none when no round, or more than one, fits:
   * the record never guesses which call a round belongs to.
   */
  take(toolId: string, request: JsonRecord): string | undefined {
    const params = request["params"];
    if (!isRecord(params) || !(Object.hasOwn(params, "inputResponses") || Object.hasOwn(params, "requestState"))) return undefined;
    const state = params["requestState"];
    const requestState = typeof state === "string" ? state : undefined;
    if (state !== undefined && requestState === undefined) return undefined;
    const args = argumentsOf(request);
    if (args === undefined) return undefined;
    const fits = this.open.filter((r) => r.toolId === toolId && r.args === args && r.requestState === requestState);
    const [round] = fits;
    if (round === undefined || fits.length > 1) return undefined;
    this.open = this.open.filter((r) => r !== round);
    return round.callId;
  }
}

/** The canonical form of a request's `params.arguments`, `null` when it has none; undefined when it has no canonical form. */
function argumentsOf(request: JsonRecord): string | undefined {
  const params = request["params"];
  const args: Json = isRecord(params) ? (params["arguments"] ?? null) : null;
  return canonicalJson(args);
}
