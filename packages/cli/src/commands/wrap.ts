import { Command, Option } from "clipanion";
import { describeIoError } from "@aegis/format/internal";
import { BindingsParseError, type Bindings } from "@aegis/policy";
import { loadBindings } from "@aegis/policy/internal";
import { WrapError, runWrap, type RefusalStyle, type WrapOptions } from "@aegis/mcp";
import { AegisCommand } from "../command.js";
import { resolveControlGroup } from "../control-group.js";
import { readSigningKey } from "../signing-key.js";
import type { ExitCode } from "../exit-code.js";
import { CliError, type CliFault } from "../fault.js";
import { readPolicy } from "../policy-file.js";
import { witnessTargets } from "../witness-targets.js";
import { REFUSAL_STYLES } from "../usage-text.js";
import { isKeyName } from "@aegis/proof/internal";

export class WrapCommand extends AegisCommand {
  static override paths = [["wrap"]];

  static override usage = Command.Usage({
    description: "Record (and with --policy, enforce) every tools/call to an MCP server",
    details: `
      Starts the MCP server \`<CMD> [ARGS...]\` and relays its stdio: the client talks to \`aegis wrap\` as it would to the server. Every \`tools/call\` gets an \`intent\` Line, durable before the call reaches the server, and an \`outcome\` Line once it is answered, in the record at \`--audit\`, signed with \`--signing-key\`. Every other message passes through untouched, byte for byte; the server's stderr is teed to this stderr. Each frame is read once, strictly: one that readers could take two ways (not UTF-8, not JSON, a key written twice, a lone surrogate, a number past 2^53, ...) never reaches the other side, and is recorded by its digest; so is a batch holding a call, and an answer that pairs with no request in flight.

      With \`--envelope\`, the verbatim bytes of each request and response, and each tool definition the server lists, are kept in an Envelope store. Outcomes name the digest of the tool's definition as last listed (\`tool_spec_digest\`), so a server that changes a tool between calls is on record.

      With \`--policy\`, each call is decided by the Policy Set first: a denied, rate-limited or parked call never reaches the server, and the client gets a tool result with \`isError: true\` saying what refused it (the rule and reason, or the approval it waits for and how it is given), the facts under \`_meta["io.github.aegis-ts/refusal"]\`; \`--refusal reference\` answers with the Rust reference's JSON-RPC error -32042 instead. A frame that is not one call (unreadable, or a batch) is always answered with that error. \`--bindings\` says, per tool, which capability it exercises and where its path or URL argument is, so that rules on \`capability\`, \`fs\` and \`net\` can match. A parked call is approved with \`aegis approve\` over the control socket (default \`<audit>.control\`, printed on stderr) and then retried.

      Whoever can connect to the control socket can approve. It is created mode 0600, wrap's own user's alone: an agent running as that user can approve its own parked call, whose id its refusal carries. \`--control-group <NAME|GID>\` makes the socket mode 0660, owned by that group; run wrap as a user of its own (\`sudo -n -u aegis-wrap\` on one fixed script that runs \`aegis wrap ... --control-group approvers\`), with the approvers in the group and the agent's user in neither, and the agent can no longer reach the socket, the record or the Envelope (README, "Approvals an agent cannot give itself").

      With \`--checkpoints\`, the record is checkpointed as it is written (SPEC §19.5): every 1000 durable Lines, a second after a Line no checkpoint covers, and after the close, a signed checkpoint of every Line on disk replaces \`<audit>.checkpoint\`. After a crash, \`aegis verify --checkpoint <audit>.checkpoint <audit>\` anchors the Session up to it; copy it elsewhere to catch a record later cut short. With \`--witness VKEY@URL\` (repeatable), each checkpoint is also pushed to that witness in the background (SPEC §19.6): a call never waits on a witness. What each witness last cosigned is kept in \`<audit>.witnesses\`, so a restarted wrap resumes from its size; after the close, \`<audit>.checkpoint\` carries the witnesses' cosignatures of the final checkpoint (waited for up to 15 s). A witness's evidence against the record (it holds a larger tree, or refuses the consistency proof) is said on stderr at once.

      With \`--url <URL>\` in place of the command, wrap reaches a Streamable HTTP server through a client of its own (kept-alive HTTP/1.1; a redirect is followed only within the server's origin), and still speaks stdio to the client. \`--header NAME:VALUE\` adds a request header; a credential comes from the environment, \`--header-env NAME:VAR\` (\`--header Authorization:...\` is refused: a command line is visible to every user of the machine). With \`--listen HOST:PORT\`, wrap serves Streamable HTTP to clients at \`http://HOST:PORT/mcp\` instead of stdio, in front of the command or of the \`--url\` server: each client session gets a server (or an HTTP session) of its own, all recorded in the one Session, until SIGINT, SIGTERM or SIGHUP. Every request must carry a bearer token (\`Authorization: Bearer <token>\`), or gets 401 and reaches no server: every user of the machine can reach a loopback port. The token is \`--listen-token-env VAR\`'s value, or else the one in \`<audit>.listen-token\`, a file wrap makes the first time (mode 0600, a random token) and keeps, so a client's configuration stays valid across restarts; wrap prints that path, never the token. Off loopback, \`--listen-token-env\` is required. A request whose Origin is not the listener's own gets 403, and so does one naming another Host on loopback. A client's message that crosses HTTP is recorded as the JSON text \`JSON.stringify\` writes of it; a server's, as the bytes that came.

      With \`--confine\`, the server (its whole process tree, each \`--listen\` session's too) is held by the kernel, through bubblewrap (\`bwrap\`, found on PATH), to what the \`--allow-*\` flags grant, and nothing else: \`--allow-read PATH\`, \`--allow-write PATH\` (write implies read) and \`--allow-net HOST:PORT\`, each repeatable, and \`--allow-exec-support\` for what a dynamically linked program needs to start (read on /usr /lib /lib64 /lib32 /bin /sbin /etc, a /dev and a /proc of its own). No network without \`--allow-net\`, not even the machine's loopback. With no grant the server cannot start, and wrap says which flag is missing. When bubblewrap is missing or cannot enforce every grant, wrap refuses to start; \`--best-effort\` starts the server with what can be enforced and says so. The confinement in force is signed in the Session's \`open\` Line, and \`aegis show\` prints it.

      With \`--otlp\`, each call's OpenTelemetry span (as \`aegis export\` makes it) is exported as the call ends, over OTLP/HTTP to where \`OTEL_EXPORTER_OTLP_ENDPOINT\`, \`_HEADERS\` and \`_PROTOCOL\` say, through a batching processor: no call waits for it, and an endpoint that is down changes nothing in the record (wrap says so on stderr). A \`tools/call\` whose \`params._meta\` carries a W3C \`traceparent\` gets its span in that trace. \`--otlp-content\` adds each call's arguments and result, which may hold secrets.

      SIGINT, SIGTERM and SIGHUP close the Session cleanly: calls in flight are given their outcome and a signed \`close\` is written. Exit code: the server's own (1 if it was killed by a signal or exited before the client hung up); 1 when wrap cannot start or cannot record; 128+n when wrap was stopped by signal n.
    `,
    examples: [
      [
        "Record every tool call to a filesystem server (npm install --global @modelcontextprotocol/server-filesystem)",
        "aegis wrap --audit session.aarl --signing-key signing.key -- mcp-server-filesystem /srv/data",
      ],
      [
        "Keep the bytes, and enforce a Policy Set",
        "aegis wrap --audit session.aarl --signing-key signing.key --envelope session.envelope --policy policy.yaml --bindings server-filesystem.yaml -- mcp-server-filesystem /srv/data",
      ],
      [
        "Hold the server to its code and /srv/data, with no network",
        "aegis wrap --audit session.aarl --signing-key signing.key --confine --allow-exec-support --allow-read /usr/local/lib/node_modules --allow-write /srv/data -- mcp-server-filesystem /srv/data",
      ],
      ["Approve a parked call, from another terminal", "aegis approve apr-0b6f2c1e-... --control session.aarl.control"],
      [
        "Record every call to a remote Streamable HTTP server, its token from the environment",
        "aegis wrap --audit session.aarl --signing-key signing.key --url https://mcp.example.com/mcp --header-env Authorization:MCP_AUTHORIZATION",
      ],
      [
        "Serve a stdio server to HTTP clients at http://127.0.0.1:8808/mcp, the bearer token in session.aarl.listen-token",
        "aegis wrap --audit session.aarl --signing-key signing.key --listen 127.0.0.1:8808 -- mcp-server-filesystem /srv/data",
      ],
    ],
  });

  audit = Option.String("--audit", { required: true, description: "The record file to append a Session to" });
  signingKey = Option.String("--signing-key", { required: true, description: "The Ed25519 key file that signs the Session (aegis keygen)" });
  envelope = Option.String("--envelope", { description: "An Envelope store directory for the verbatim bytes (created when absent)" });
  policy = Option.String("--policy", { description: "A Policy Set to decide every tools/call with" });
  bindings = Option.String("--bindings", { description: "Which capability, path and URL each tool binds (needs --policy)" });
  role = Option.String("--role", { description: "The caller's role, recorded as decision_axes.role (needs --policy)" });
  session = Option.String("--session", { description: "The policy session scope, recorded as decision_axes.session (needs --policy)" });
  control = Option.String("--control", { description: "Where to listen for approvals (default <audit>.control)" });
  controlGroup = Option.String("--control-group", { description: "Let this group's members approve: the control socket is then theirs too (mode 0660)" });
  checkpoints = Option.Boolean("--checkpoints", false, { description: "Keep a signed checkpoint of the record in <audit>.checkpoint as it grows" });
  origin = Option.String("--origin", {
    description: "With --checkpoints: the checkpoints' origin, as witnesses know the log (default: from the record's first Line)",
  });
  witnesses = Option.Array("--witness", [], {
    arity: 1,
    description: "VKEY@URL: with --checkpoints, push each checkpoint to this witness, in the background (repeatable)",
  });
  refusal = Option.String("--refusal", {
    description: "How a refused call is answered: tool-result (default) or reference (the Rust reference's JSON-RPC error)",
  });
  otlp = Option.Boolean("--otlp", false, { description: "Export each call's OpenTelemetry span as it ends (OTEL_EXPORTER_OTLP_* variables)" });
  otlpContent = Option.Boolean("--otlp-content", false, { description: "With --otlp: put each call's arguments and result on its span" });
  confine = Option.Boolean("--confine", false, { description: "Hold the server in a sandbox (bubblewrap) that grants only what the --allow-* flags name" });
  allowRead = Option.Array("--allow-read", [], { arity: 1, description: "PATH: with --confine, the server may read it (repeatable)" });
  allowWrite = Option.Array("--allow-write", [], { arity: 1, description: "PATH: with --confine, the server may read and write it (repeatable)" });
  allowNet = Option.Array("--allow-net", [], {
    arity: 1,
    description: "HOST:PORT: with --confine, the server may connect there, and nowhere else (repeatable)",
  });
  allowExecSupport = Option.Boolean("--allow-exec-support", false, {
    description:
      "With --confine: grant read on /usr /lib /lib64 /lib32 /bin /sbin /etc, a /dev and a /proc of its own, which a dynamically linked program needs to start",
  });
  bestEffort = Option.Boolean("--best-effort", false, {
    description: "With --confine: where not all can be enforced, run the server with what can, said on stderr and on the record",
  });
  url = Option.String("--url", { description: "Wrap the Streamable HTTP server at this URL instead of starting one (no -- <CMD>)" });
  header = Option.Array("--header", [], { arity: 1, description: "NAME:VALUE: a request header to --url (not for secrets: see --header-env)" });
  headerEnv = Option.Array("--header-env", [], { arity: 1, description: "NAME:VAR: a request header to --url whose value is the environment variable VAR" });
  listen = Option.String("--listen", { description: "HOST:PORT: serve Streamable HTTP to clients at http://HOST:PORT/mcp instead of stdio" });
  listenTokenEnv = Option.String("--listen-token-env", {
    description: "VAR: the bearer token clients must present, from the environment (default: the one in <audit>.listen-token; needed off loopback)",
  });
  child = Option.Rest({ name: "CMD" });

  /** wrap's failures to start all exit 1, as the reference's do: its exit code is otherwise the server's. */
  protected override fail(fault: CliFault): ExitCode {
    super.fail(fault);
    return 1;
  }

  protected async run(): Promise<ExitCode> {
    const confine = this.confinement();
    const witnesses = witnessTargets(this.witnesses, "wrap");
    if (witnesses.length > 0 && !this.checkpoints) throw usage("--witness is read only with --checkpoints: what is pushed to a witness is a checkpoint");
    if (this.origin !== undefined && !this.checkpoints) throw usage("--origin is read only with --checkpoints: it names the checkpoints' log");
    if (this.origin !== undefined && !isKeyName(this.origin))
      throw usage(`--origin ${JSON.stringify(this.origin)}: an origin is non-empty, with no space and no +`);
    const [command, ...args] = this.child;
    const server = serverOf(command, args, this.url, this.header, this.headerEnv);
    const listen = this.listen === undefined ? undefined : listenOf(this.listen, this.listenTokenEnv);
    if (this.listen === undefined && this.listenTokenEnv !== undefined) throw usage("--listen-token-env is read only with --listen");
    if (this.policy === undefined) {
      for (const [flag, value] of [
        ["--bindings", this.bindings],
        ["--role", this.role],
        ["--session", this.session],
        ["--control", this.control],
        ["--control-group", this.controlGroup],
      ] as const) {
        if (value !== undefined) throw usage(`${flag} is read only with --policy: without a Policy Set, nothing is decided`);
      }
    }
    const refusal = refusalStyle(this.refusal);
    if (this.otlpContent && !this.otlp) throw usage("--otlp-content is read only with --otlp: without it, no span is exported");
    const key = await readSigningKey(this.signingKey);
    const policy = this.policy === undefined ? undefined : await readPolicy(this.policy);
    const bindings = this.bindings === undefined ? undefined : await readBindings(this.bindings);
    const controlGroup = this.controlGroup === undefined ? undefined : await resolveControlGroup(this.controlGroup);
    let result;
    try {
      result = await runWrap({
        ...server,
        ...(listen === undefined ? {} : { listen }),
        audit: this.audit,
        key,
        ...optional({ envelope: this.envelope, policy, bindings, role: this.role, session: this.session, control: this.control, controlGroup, refusal }),
        ...(this.checkpoints
          ? { checkpoints: { ...(witnesses.length === 0 ? {} : { witnesses }), ...(this.origin === undefined ? {} : { origin: this.origin }) } }
          : {}),
        ...(confine === undefined ? {} : { confine }),
        ...(this.otlp ? { otlp: { content: this.otlpContent } } : {}),
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
      });
    } catch (error) {
      if (error instanceof WrapError) throw new CliError({ code: "wrap", fault: error.fault, detail: error.message });
      throw error;
    }
    // The server's code passes through: it may be any byte, not only aegis's own four.
    return result.exitCode as ExitCode;
  }

  /** `--confine` and its grants (SPEC §17.11); a grant without `--confine` is a usage error, never ignored. */
  private confinement(): WrapOptions["confine"] {
    const grants = [
      this.allowRead.length > 0 ? "--allow-read" : undefined,
      this.allowWrite.length > 0 ? "--allow-write" : undefined,
      this.allowNet.length > 0 ? "--allow-net" : undefined,
      this.allowExecSupport ? "--allow-exec-support" : undefined,
      this.bestEffort ? "--best-effort" : undefined,
    ].filter((f): f is string => f !== undefined);
    if (!this.confine) {
      if (grants.length > 0)
        throw usage(`${grants.join(", ")} ${grants.length === 1 ? "is" : "are"} read only with --confine: without it, the server is not confined`);
      return undefined;
    }
    if (this.url !== undefined) throw usage("--confine holds a server wrap starts: with --url there is no process to hold");
    return { read: this.allowRead, write: this.allowWrite, net: this.allowNet, execSupport: this.allowExecSupport, bestEffort: this.bestEffort };
  }
}

/**
 * The server to wrap (SPEC §17.10): the command after `--`, or `--url` with its headers. A
 * header's value is a secret when it comes from the environment (`--header-env`): what is on
 * a command line, any user of the machine can read (`ps`), so credentials are refused there.
 */
function serverOf(
  command: string | undefined,
  args: readonly string[],
  url: string | undefined,
  header: readonly string[],
  headerEnv: readonly string[],
): { command: string; args: readonly string[] } | { url: string; headers: Record<string, string> } {
  if (url === undefined) {
    if (header.length + headerEnv.length > 0) throw usage("--header and --header-env are read only with --url: they are sent to the server's URL");
    if (command === undefined) throw usage("wrap needs the server: -- <CMD> [ARGS...] to start one, or --url <URL> to reach one");
    if (command === "") throw usage("wrap needs the server to start after --: aegis wrap ... -- <CMD> [ARGS...]");
    return { command, args };
  }
  if (command !== undefined) throw usage("give the server after -- or with --url, not both");
  const headers: Record<string, string> = {};
  for (const given of header) {
    const [name, value] = splitHeader(given, "--header", "NAME:VALUE");
    if (SECRET_HEADERS.has(name.toLowerCase())) {
      throw usage(`--header ${name} puts a credential on the command line, where any user can read it: pass --header-env ${name}:VAR, VAR holding the value`);
    }
    headers[name] = value;
  }
  for (const given of headerEnv) {
    const [name, variable] = splitHeader(given, "--header-env", "NAME:VAR");
    const value = process.env[variable];
    if (value === undefined || value === "") throw usage(`--header-env ${name}:${variable}: the environment variable ${variable} is not set`);
    checkHeaderValue(name, value, `the value of ${variable}`);
    headers[name] = value;
  }
  return { url, headers };
}

/** Headers that carry credentials: from the environment only. */
const SECRET_HEADERS = new Set(["authorization", "proxy-authorization", "cookie"]);

function splitHeader(given: string, flag: string, form: string): [string, string] {
  const colon = given.indexOf(":");
  const name = colon === -1 ? "" : given.slice(0, colon).trim();
  if (colon === -1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw usage(`${flag} takes ${form}, a header name before the colon`);
  const value = given.slice(colon + 1).trim();
  if (flag === "--header") checkHeaderValue(name, value, "its value");
  return [name, value];
}

function checkHeaderValue(name: string, value: string, what: string): void {
  // Never echoed: the value may be a secret.
  if (/[\r\n\0]/.test(value)) throw usage(`the header ${name}: ${what} holds a line break or NUL, which no header may`);
}

/** `--listen HOST:PORT` (an IPv6 address in brackets), and its token from the environment. */
function listenOf(given: string, tokenEnv: string | undefined): { host: string; port: number; token?: string } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(given);
  const port = match === null ? Number.NaN : Number(match[2]);
  if (match === null || !(port <= 65535)) throw usage(`--listen takes HOST:PORT (127.0.0.1:8808, [::1]:8808), not ${JSON.stringify(given)}`);
  const host = (match[1] ?? "").replace(/^\[(.*)\]$/, "$1");
  if (tokenEnv === undefined) return { host, port };
  const token = process.env[tokenEnv];
  if (token === undefined || token === "") throw usage(`--listen-token-env ${tokenEnv}: the environment variable ${tokenEnv} is not set`);
  // Never echoed: the value is a secret.
  if (!/^[\x21-\x7e]+$/.test(token)) throw usage(`--listen-token-env ${tokenEnv}: a bearer token is visible ASCII, with no space or line break`);
  return { host, port, token };
}

/** `--refusal`: the two answers SPEC §17.3 names. */
function refusalStyle(value: string | undefined): RefusalStyle | undefined {
  if (value === undefined) return undefined;
  const style = REFUSAL_STYLES.find((s) => s === value);
  if (style !== undefined) return style;
  throw usage(`--refusal takes ${REFUSAL_STYLES.join(" or ")}, not ${JSON.stringify(value)}`);
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", message, command: "wrap" });
}

function optional<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}

async function readBindings(path: string): Promise<Bindings> {
  try {
    return await loadBindings(path);
  } catch (error) {
    if (error instanceof BindingsParseError) throw new CliError({ code: "bindings_parse", path, message: error.message });
    throw new CliError({ code: "unreadable_bindings", path, detail: describeIoError(error) });
  }
}
