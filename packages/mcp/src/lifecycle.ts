import type { Unanswered } from "./outcomes.js";

/**
 * The relay's life (SPEC §17.7) as one value and one function: every way it moves, and
 * every way it ends, is a case of {@link transition}, so none is handled in two places.
 */
export type Phase =
  /** Frames flow both ways. */
  | { readonly code: "relaying" }
  /**
   * No more is read from the client (it hung up, its end of stdout went away, or the record
   * failed); the server's stdin is closed once queued frames are through, and its silence is
   * waited out: each byte it writes starts the grace again.
   */
  | { readonly code: "draining"; readonly cause: "client_hung_up" | "client_gone" | "record_failed" }
  /** A signal: as draining, but the grace is a fixed budget the server's output does not extend. */
  | { readonly code: "stopping"; readonly signal: string }
  | { readonly code: "ended"; readonly why: Unanswered; readonly serverEndedFirst: boolean };

/** What can happen to the relay. */
export type LifeEvent =
  /** The client's stdin ended. */
  | { readonly code: "client_ended" }
  /** Writing to the client failed: nothing more can reach it. */
  | { readonly code: "client_gone" }
  /** A Line could not be written: no call may run (SPEC §17.2). */
  | { readonly code: "record_failed" }
  | { readonly code: "signal"; readonly signal: string }
  /** The server's stdout ended: the process is gone, or has let go of its output. */
  | { readonly code: "server_ended" }
  /** The grace of `draining` or `stopping` ran out. */
  | { readonly code: "grace_over" };

/** What stands on each side of a relay (SPEC §17.10): the reference's is stdio and a child. */
export interface Sides {
  readonly client: "stdio" | "http";
  readonly server: "child" | "url";
}

/**
 * Why calls went unanswered, in the words true of these sides: the reference's words speak
 * of a child and of stdin, and a record states no false fact (SPEC §17.2, §17.10).
 */
export function reasonFor(why: Unanswered, sides: Sides): Unanswered {
  if (why.code === "child_exited" && sides.server === "url") return { code: "connection_lost" };
  if (why.code === "grace_expired" && (sides.client === "http" || sides.server === "url")) return { code: "server_silent" };
  if (why.code === "signalled" && sides.server === "url") return { code: "stopped", signal: why.signal };
  return why;
}

/** The phase after `event`. Pure: the relay does what entering the new phase asks. */
export function transition(phase: Phase, event: LifeEvent): Phase {
  switch (phase.code) {
    case "relaying":
      switch (event.code) {
        case "client_ended":
          return { code: "draining", cause: "client_hung_up" };
        case "client_gone":
          return { code: "draining", cause: "client_gone" };
        case "record_failed":
          return { code: "draining", cause: "record_failed" };
        case "signal":
          return { code: "stopping", signal: event.signal };
        case "server_ended":
          return { code: "ended", why: { code: "child_exited" }, serverEndedFirst: true };
        case "grace_over":
          return phase;
      }
      break;
    case "draining":
      switch (event.code) {
        case "client_ended":
        case "client_gone":
        case "record_failed":
          return phase;
        case "signal":
          return { code: "stopping", signal: event.signal };
        case "server_ended":
          return { code: "ended", why: { code: "child_exited" }, serverEndedFirst: false };
        case "grace_over":
          return { code: "ended", why: { code: "grace_expired" }, serverEndedFirst: false };
      }
      break;
    case "stopping":
      switch (event.code) {
        case "client_ended":
        case "client_gone":
        case "record_failed":
          return phase;
        // A second signal skips the wait; the server ending or the budget running out ends it too.
        case "signal":
        case "server_ended":
        case "grace_over":
          return { code: "ended", why: { code: "signalled", signal: phase.signal }, serverEndedFirst: false };
      }
      break;
    case "ended":
      return phase;
  }
}
