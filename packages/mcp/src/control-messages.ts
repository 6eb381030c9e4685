import type { ParkSummary } from "./park-summary.js";

/** The control socket's two messages (SPEC §17.5), apart from the socket so that its client and its server both read them. */

/**
 * A request to a running wrap, sent as one line of JSON (SPEC §17.5): approve or deny a
 * parked call by its `approval_id` (a denial records its `reason`), or list the calls parked.
 */
export type ControlRequest =
  | { readonly op: "approve"; readonly approval_id: string }
  | { readonly op: "deny"; readonly approval_id: string; readonly reason: string }
  | { readonly op: "list" };

/**
 * The one line of JSON a running wrap answers a {@link ControlRequest} with (SPEC §17.5): the
 * answer recorded (`seq` and `line_hash` name its signed `decision` Line), the calls parked,
 * or, with `ok: false`, why the request was refused; nothing is written then.
 */
export type ControlResponse =
  | { readonly ok: true; readonly op: "approve" | "deny"; readonly approval_id: string; readonly seq: number; readonly line_hash: string }
  | { readonly ok: true; readonly op: "list"; readonly pending: readonly ParkSummary[] }
  | { readonly ok: false; readonly code: ControlErrorCode; readonly message: string };

/**
 * Why a running wrap refused a control request (SPEC §17.5): `unknown_approval`, no call is
 * parked under the id; `already_decided`, it was answered already or is being answered;
 * `bad_request`, the line is no request; `record_failed`, the `decision` could not be written.
 */
export type ControlErrorCode = "unknown_approval" | "already_decided" | "bad_request" | "record_failed";
