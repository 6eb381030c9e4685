import type { SigningKey } from "@aegis/format";
import type { Readable, Writable } from "node:stream";
import type { Bindings, PolicySet } from "@aegis/policy";
import type { CheckpointingOptions } from "@aegis/proof";
import type { RefusalStyle } from "./refusal.js";
import type { OtlpOptions } from "./otel/options.js";

/**
 * The options of {@link runWrap}, which is `aegis wrap` as a library (SPEC §17): start an MCP
 * server as a child process (or reach one over Streamable HTTP), relay between it and the
 * client (on this process's stdio, or over Streamable HTTP), record every `tools/call` it
 * carries, and (with a Policy Set) refuse the ones the set does not allow.
 */
export interface WrapOptions {
  /** The server's program: give it, or `url`. */
  readonly command?: string;
  /** The server's arguments, passed to it as they are (no shell). */
  readonly args?: readonly string[];
  /** A Streamable HTTP server to relay to instead of a command (SPEC §17.10), through the MCP SDK's client transport. */
  readonly url?: string;
  /** Request headers on every request to `url`; a value may be a secret, and is never printed. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Serve Streamable HTTP to clients at `http://<host>:<port>/mcp` instead of relaying this
   * process's stdio (SPEC §17.10). Every request must present a bearer token: `token`, or
   * else the one kept in `<audit>.listen-token` (made there, mode 0600, the first time). Off a
   * loopback address, `token` is required.
   */
  readonly listen?: { readonly host: string; readonly port: number; readonly token?: string };
  /** The record file: a new Session is appended. */
  readonly audit: string;
  /** The key that signs every Line of the Session. */
  readonly key: SigningKey;
  /** An Envelope store directory for the verbatim bytes (created when absent). */
  readonly envelope?: string;
  /** A Policy Set to enforce (SPEC §17.3): a call it does not allow never reaches the server. */
  readonly policy?: PolicySet;
  /** Where each tool's path or URL lies in its request, for the axes `policy` decides on (SPEC §17.4). */
  readonly bindings?: Bindings;
  /** `decision_axes.role` of every call under `policy`: the role the agent runs as. */
  readonly role?: string;
  /** `decision_axes.session` of every call under `policy`: the set's session scope, not the record's Session. */
  readonly session?: string;
  /** Follow symbolic links in bound paths (default true). */
  readonly followSymlinks?: boolean;
  /**
   * The control socket for approvals, when a Policy Set is given: default
   * `<audit>.control`; `null` for none.
   */
  readonly control?: string | null;
  /**
   * A group id to open the control socket to (SPEC §17.5): owned by it, mode 0660, so that
   * its members can approve. Without it, the socket is wrap's own user's alone (0600).
   */
  readonly controlGroup?: number;
  /**
   * Checkpoint the record as it is written (SPEC §19.5): every `everyLines` durable Lines,
   * `everyMs` after an uncovered one, and after the close, into `<audit>.checkpoint`.
   */
  readonly checkpoints?: CheckpointingOptions;
  /**
   * How a refused `tools/call` is answered (SPEC §17.3): `tool-result` (default), a result
   * with `isError` that the model is shown; `reference`, the Rust reference's JSON-RPC error.
   */
  readonly refusal?: RefusalStyle;
  /** The longest frame read, in bytes (default 256 MiB); a longer one is counted and dropped (SPEC §17.1). */
  readonly maxFrameBytes?: number;
  /** Default 5000: the server's silence wrap waits out after the client hangs up. */
  readonly graceMs?: number;
  /** Where the client's frames are read from (default `process.stdin`). */
  readonly stdin?: Readable;
  /** Where the server's frames go to the client (default `process.stdout`): JSON-RPC only. */
  readonly stdout?: Writable;
  /** Where the server's stderr is copied and wrap's notices are written (default `process.stderr`). */
  readonly stderr?: Writable;
  /**
   * Hold the server (its whole process tree) in a sandbox that grants only what is named here
   * (SPEC §17.11), the reference's flags with the reference's meaning: deny by default, fail
   * closed. Not with `url`: there is no process to hold.
   */
  readonly confine?: {
    /** `--allow-read PATH`: read (and list) the path and what is under it. */
    readonly read: readonly string[];
    /** `--allow-write PATH`: write it too (write implies read). */
    readonly write: readonly string[];
    /** `--allow-net HOST:PORT`: connect to that destination, and to no other. */
    readonly net: readonly string[];
    /** `--allow-exec-support`: read what a dynamically linked program needs to start. */
    readonly execSupport: boolean;
    /** `--best-effort`: start the server with what can be enforced, and say what cannot. */
    readonly bestEffort: boolean;
  };
  /** The server's environment (default this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** The server's working directory (default this process's). */
  readonly cwd?: string;
  /** Stop on these signals, closing the Session cleanly (default SIGINT, SIGTERM, SIGHUP). */
  readonly signals?: readonly NodeJS.Signals[];
  /**
   * Export each call's OpenTelemetry span as it ends (SPEC Appendix A.5), over OTLP to where
   * this process's `OTEL_EXPORTER_OTLP_*` variables say: through a batching processor, never
   * on a call's path, and a failure to export never touches the record. Needs the
   * OpenTelemetry packages, optional peers of `@aegis/mcp` (ADR 0024).
   */
  readonly otlp?: OtlpOptions;
}
