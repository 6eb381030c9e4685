import { unmatched, errnoOf, messageOf } from "@aegis/format/internal";
import { chmod, lchown, link, lstat, mkdtemp, rm, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { connect, createServer, type Server, type Socket } from "node:net";
import { match } from "ts-pattern";
import type { ParkAnswer, ParkRefusal, ParkState } from "./parks.js";
import type { ParkSummary } from "./park-summary.js";
import { FaultError } from "@aegis/format";
import { checkControlAnswer } from "./control-answer.js";
import type { ControlRequest, ControlResponse } from "./control-messages.js";

/**
 * The control socket (SPEC §17.5): a Unix socket beside the record, mode 0600 (or 0660 and
 * owned by an approvers' group), on which a running wrap takes a human's answer to a park.
 * One request and one answer per connection, each a line of JSON. Whoever can connect can
 * approve: the file's mode and group are the whole of the access control.
 */

/** What the control socket asks of the running relay, and whom it lets in. */
export interface ControlHandler {
  answer(
    approvalId: string,
    answer: ParkAnswer,
  ): Promise<{ readonly ok: true; readonly seq: number; readonly lineHash: string } | { readonly ok: false; readonly refusal: ParkRefusal }>;
  pending(): readonly ParkSummary[];
  /**
   * Who besides wrap's own user may connect (SPEC §17.5): a group id, whose members (the
   * approvers) can, the socket being owned by it and mode 0660. Without it, mode 0600.
   */
  readonly group?: number;
}

/** A path a Unix socket can have: Linux keeps at most 107 bytes of it. */
const MAX_SOCKET_PATH_BYTES = 107;
const MAX_REQUEST_BYTES = 64 * 1024;
/**
 * The most bytes of answer `aegis approve` reads (SPEC §17.5, §18): whatever listens at the
 * path answers, and it must not make the approver's process hold without end. The largest
 * answer is a `list`; a park there takes some 6.5 KiB at most in practice (its arguments cut at
 * 4096 bytes, escaped once more as a JSON string, with its scope), so 8 MiB lists over a
 * thousand such parks, more than a person reads through, and typical ones by the ten thousand.
 * Parsing the worst 8 MiB (millions of empty objects) holds some 250 MiB for a moment: bounded.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** The private directory the socket is bound in before it is linked into place: `.aegis-XXXXXX`. */
const BIND_PREFIX = ".aegis-";

/**
 * Why wrap could not listen on its control socket (SPEC §17.5). wrap then starts no server:
 * {@link runWrap} throws it inside a {@link WrapError} (fault `control`).
 */
export class ControlError extends FaultError<{ readonly code: ControlError["code"]; readonly path: string; readonly detail: string }> {
  constructor(
    /**
     * `path_too_long`: over the 107 bytes a Unix socket path may have; `in_use`: another wrap
     * answers there; `not_a_socket`: a file that is no socket is in the way; `io`: listening
     * failed; `group`: the socket could not be given to the approvers' group (wrap's user is
     * neither root nor a member of it).
     */
    readonly code: "path_too_long" | "in_use" | "not_a_socket" | "io" | "group",
    /** The socket path wrap tried to listen on. */
    readonly path: string,
    detail: string,
  ) {
    super("ControlError", { code, path, detail }, (f) => f.detail);
  }
}

export interface ControlServer {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Give the socket, still where no one else can reach it, to `group`, then open it to the
 * group (0660): the group first, so that no member of wrap's own primary group may connect
 * meanwhile. lchown: a link put in its place would not be followed.
 */
async function openToGroup(socket: string, group: number, path: string): Promise<void> {
  try {
    await lchown(socket, -1, group);
    await chmod(socket, 0o660);
  } catch (error) {
    throw new ControlError(
      "group",
      path,
      `cannot give the socket to group ${group}: ${errnoOf(error) === "EPERM" ? "operation not permitted (wrap's user must be root or a member of the group)" : messageOf(error)}`,
    );
  }
}

/**
 * Listen on `path`. A socket left there by a wrap that died is replaced; one that answers
 * belongs to a running wrap, and is refused.
 */
export async function listenControl(path: string, handler: ControlHandler): Promise<ControlServer> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new ControlError("path_too_long", path, `a Unix socket path holds at most ${MAX_SOCKET_PATH_BYTES} bytes; this one has ${Buffer.byteLength(path)}`);
  }
  const first = join(dirname(path), `${BIND_PREFIX}XXXXXX`, "s");
  if (Buffer.byteLength(first) > MAX_SOCKET_PATH_BYTES) {
    throw new ControlError(
      "path_too_long",
      path,
      `wrap binds the socket first at ${first}, which is over the ${MAX_SOCKET_PATH_BYTES} bytes a Unix socket path holds: use a shorter directory, or a longer file name`,
    );
  }
  await clearStale(path);
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    serve(socket, handler);
  });
  // Whoever connects may approve a parked call: no other user may, at any moment, whatever the
  // umask (SPEC §17.5). The socket is bound inside a fresh 0700 directory beside `path`, where
  // no one else can reach it, made 0600, and only then linked to `path` (link, not rename:
  // it refuses to replace a socket another wrap made meanwhile). A chmod after binding in
  // place would leave a moment for another user to connect and stay connected; changing the
  // umask would change it for every file this process creates meanwhile.
  let bound: string | undefined;
  try {
    bound = await mkdtemp(join(dirname(path), BIND_PREFIX));
    const inner = join(bound, "s");
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(inner, () => {
        server.off("error", reject);
        resolve();
      });
    });
    await chmod(inner, 0o600);
    if (handler.group !== undefined) await openToGroup(inner, handler.group, path);
    await link(inner, path);
  } catch (error) {
    server.close();
    if (error instanceof ControlError) throw error;
    if (errnoOf(error) === "EEXIST") throw new ControlError("in_use", path, "another aegis wrap began listening there meanwhile");
    throw new ControlError("io", path, messageOf(error));
  } finally {
    if (bound !== undefined) await rm(bound, { recursive: true, force: true });
  }
  server.unref();
  return { path, close: () => closeServer(server, path, open) };
}

async function clearStale(path: string): Promise<void> {
  let info;
  try {
    info = await lstat(path);
  } catch {
    return;
  }
  if (!info.isSocket()) throw new ControlError("not_a_socket", path, "a file that is not a socket is in the way");
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
  if (live) throw new ControlError("in_use", path, "another aegis wrap is listening there");
  await unlink(path);
}

/** Stop listening, and drop connections still open: a peer that trickles bytes cannot hold wrap up. */
function closeServer(server: Server, path: string, open: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    for (const socket of open) socket.destroy();
    void unlink(path).catch(() => undefined);
  });
}

/** How long a peer has to send its whole request line: one deadline, not an idle time a trickle renews. */
const REQUEST_MS = 10_000;

function serve(socket: Socket, handler: ControlHandler): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const deadline = setTimeout(() => socket.destroy(), REQUEST_MS);
  socket.once("close", () => clearTimeout(deadline));
  socket.on("error", () => socket.destroy());
  socket.on("data", (chunk: Buffer) => {
    size += chunk.length;
    chunks.push(chunk);
    if (size > MAX_REQUEST_BYTES) {
      socket.removeAllListeners("data");
      clearTimeout(deadline);
      reply(socket, { ok: false, code: "bad_request", message: `a request is one line of at most ${MAX_REQUEST_BYTES} bytes` });
      return;
    }
    if (!chunk.includes(0x0a)) return;
    socket.removeAllListeners("data");
    clearTimeout(deadline);
    const text = Buffer.concat(chunks).toString("utf8");
    void handle(text.slice(0, text.indexOf("\n")), handler).then((response) => reply(socket, response));
  });
}

function reply(socket: Socket, response: ControlResponse): void {
  socket.end(`${JSON.stringify(response)}\n`);
}

async function handle(line: string, handler: ControlHandler): Promise<ControlResponse> {
  const request = parseRequest(line);
  if (request === undefined) return { ok: false, code: "bad_request", message: 'expected {"op":"approve"|"deny"|"list", ...}' };
  if (request.op === "list") return { ok: true, op: "list", pending: handler.pending() };
  const answer: ParkAnswer = request.op === "approve" ? { code: "approve" } : { code: "deny", reason: request.reason };
  try {
    const result = await handler.answer(request.approval_id, answer);
    if (result.ok) return { ok: true, op: request.op, approval_id: request.approval_id, seq: result.seq, line_hash: result.lineHash };
    return { ok: false, code: result.refusal.code, message: describeRefusal(result.refusal) };
  } catch (error) {
    return { ok: false, code: "record_failed", message: `the decision could not be recorded: ${messageOf(error)}` };
  }
}

function parseRequest(line: string): ControlRequest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (r["op"] === "list") return { op: "list" };
  const id = r["approval_id"];
  if (typeof id !== "string" || id === "") return undefined;
  if (r["op"] === "approve") return { op: "approve", approval_id: id };
  const reason = r["reason"];
  if (r["op"] === "deny" && typeof reason === "string" && reason !== "") return { op: "deny", approval_id: id, reason };
  return undefined;
}

/**
 * One line saying why an answer to a parked call was refused, for a person: the control
 * socket sends it as the refusal's `message`, which `aegis approve` prints.
 */
function describeRefusal(refusal: ParkRefusal): string {
  return match(refusal)
    .with({ code: "unknown_approval" }, (r) => `no call is parked under ${r.approvalId} in this wrap`)
    .with({ code: "already_decided" }, (r) => `${r.approvalId} was already ${describeState(r.state)}`)
    .exhaustive(unmatched);
}

function describeState(state: ParkState): string {
  return match(state)
    .with({ code: "pending" }, () => "asked about")
    .with({ code: "deciding" }, () => "being answered")
    .with({ code: "approved" }, (s) => (s.used ? "approved, and a call has run under it" : "approved"))
    .with({ code: "denied" }, (s) => `denied (${s.reason})`)
    .exhaustive(unmatched);
}

/**
 * Why asking a running wrap failed before it could answer: `no_wrap`, none listens at the
 * path (or none answered in time); `denied`, this user may not connect to the socket (it is
 * open to wrap's user, and to the members of its `--control-group`); `bad_answer`, what
 * answered was no wrap.
 */
export type ControlRequestFault =
  | { readonly code: "no_wrap"; readonly path: string; readonly detail: string }
  | { readonly code: "denied"; readonly path: string; readonly detail: string }
  | { readonly code: "bad_answer"; readonly path: string; readonly detail: string };

/**
 * What {@link requestControl} throws when no running wrap answered, or what answered was no
 * wrap; a wrap that refused the request answers `ok: false` instead.
 */
export class ControlRequestError extends FaultError<ControlRequestFault> {
  constructor(fault: ControlRequestFault) {
    super("ControlRequestError", fault, (fault) => fault.detail);
  }
}

/**
 * Ask the wrap listening at `path`. The answer is read up to 8 MiB (SPEC §18) and
 * checked against the shapes of SPEC §17.5 before it is returned.
 * @throws ControlRequestError when none answers, or what answers is no wrap (`bad_answer`).
 */
export function requestControl(path: string, request: ControlRequest, timeoutMs = 10_000): Promise<ControlResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (fault: ControlRequestFault): void => {
      clearTimeout(deadline);
      socket.destroy();
      reject(new ControlRequestError(fault));
    };
    // The whole answer within timeoutMs: an answer that trickles in does not renew it.
    const deadline = setTimeout(() => fail({ code: "no_wrap", path, detail: `no whole answer within ${timeoutMs} ms` }), timeoutMs);
    socket.once("close", () => clearTimeout(deadline));
    socket.once("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        // Stop reading at once, and drop what was read: nothing more is buffered.
        socket.removeAllListeners("data");
        chunks.length = 0;
        fail({ code: "bad_answer", path, detail: `the answer is over ${MAX_ANSWER_BYTES} bytes: is this an aegis wrap control socket?` });
        return;
      }
      chunks.push(chunk);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EACCES" || error.code === "EPERM")
        fail({ code: "denied", path, detail: "permission denied: this user may not connect to the control socket" });
      else
        fail({ code: "no_wrap", path, detail: error.code === "ENOENT" || error.code === "ECONNREFUSED" ? "no aegis wrap is listening there" : error.message });
    });
    socket.once("end", () => {
      const text = Buffer.concat(chunks).toString("utf8").trim();
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        fail({ code: "bad_answer", path, detail: "the answer was not JSON: is this an aegis wrap control socket?" });
        return;
      }
      match(checkControlAnswer(value, request))
        .with({ code: "well_formed" }, (c) => resolve(c.response))
        .with({ code: "malformed" }, (c) =>
          fail({ code: "bad_answer", path, detail: `the answer is not a control answer (${c.detail}): is this an aegis wrap control socket?` }),
        )
        .exhaustive(unmatched);
    });
  });
}
