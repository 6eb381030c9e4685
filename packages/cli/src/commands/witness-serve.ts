import { stat } from "node:fs/promises";
import { Command, Option } from "clipanion";
import { describeIoError } from "@aegis/format/internal";
import { readInputFile } from "@aegis/format/durable";
import { SIGNATURE_TYPE, VerifierKeyError, parseVerifierKey, serveWitness } from "@aegis/proof";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { parseWitnessKey, witnessVkey, type WitnessKey } from "../witness-key.js";

export class WitnessServeCommand extends AegisCommand {
  static override paths = [["witness", "serve"]];

  static override usage = Command.Usage({
    description: "Run a C2SP witness: cosign checkpoints that extend what it cosigned",
    details: `
      Serves \`POST <http://HOST:PORT>/add-checkpoint\` as \`c2sp.org/tlog-witness\` says (SPEC §19.6), for the logs named by \`--log ORIGIN=KEY\` (repeatable; \`KEY\` an aegis public key in 64 hex, or a signed-note vkey of type 0x01 named \`ORIGIN\`): a checkpoint no trusted key of its origin signed is answered 403, an unknown origin 404, an \`old\` size other than the one it holds 409 with that size (\`text/x.tlog.size\`), a consistency proof that does not verify 422, a malformed body 400; otherwise one \`cosignature/v1\` line. What it cosigned (the size and root per origin) is kept in \`--state DIR\` (made, mode 0700, when absent), on disk before it answers: stopped or killed at any point and started again, it never cosigns a tree that does not extend one it cosigned, nor another tree of the same size.

      A witness is meant to be reached by the logs it witnesses, from other hosts: \`--listen\` takes any address, a public one included (there is no token: what it cosigns is public, and a request can only add a tree that extends what it holds). Bounded: bodies of at most about 1 MiB, headers within 10 s, requests within 30 s, 256 connections. Runs until SIGINT or SIGTERM.
    `,
    examples: [
      [
        "Witness one record's checkpoints, from any host",
        "aegis witness serve --key /etc/aegis/witness.key --log example.org/agent=0b5e...e7 --state /var/lib/aegis-witness --listen 0.0.0.0:7380",
      ],
    ],
  });

  key = Option.String("--key", { required: true, description: "The witness's signing key file (aegis witness keygen)" });
  logs = Option.Array("--log", [], { arity: 1, description: "ORIGIN=KEY: a log it witnesses, and a key its checkpoints may be signed with (repeatable)" });
  state = Option.String("--state", { required: true, description: "Where what it cosigned is kept (made, mode 0700, when absent)" });
  listen = Option.String("--listen", { required: true, description: "HOST:PORT to serve on (0.0.0.0 or a public address to be reached from other hosts)" });

  protected async run(): Promise<ExitCode> {
    if (this.logs.length === 0) throw usage("give the logs to witness: --log ORIGIN=KEY, repeatable");
    const logs = new Map<string, Uint8Array[]>();
    for (const given of this.logs) {
      const [origin, key] = logOf(given);
      logs.set(origin, [...(logs.get(origin) ?? []), key]);
    }
    const { host, port } = addressOf(this.listen);
    const witness = await readWitnessKey(this.key);
    const say = (text: string): void => void this.context.stderr.write(`aegis witness: ${text}\n`);
    let server;
    try {
      server = await serveWitness({ key: witness.key, name: witness.name, logs, stateDir: this.state, host, port, say });
    } catch (error) {
      const listening = error instanceof Error && "code" in error && (error.code === "EADDRINUSE" || error.code === "EADDRNOTAVAIL" || error.code === "EACCES");
      throw new CliError({
        code: "witness",
        problem: listening ? "listen" : "state",
        detail: listening
          ? `cannot listen on ${this.listen}: ${describeIoError(error)}`
          : `--state ${this.state}: ${error instanceof Error ? error.message : String(error)}`,
        help: listening ? "choose another --listen address or port" : "give each witness a state directory of its own, readable and writable by it",
      });
    }
    say(`serving ${server.url}/add-checkpoint as ${witnessVkey(witness)}, for ${[...logs.keys()].join(", ")}`);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      for (const s of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(s, () => resolve(s));
    });
    await server.close();
    return (128 + (signal === "SIGINT" ? 2 : signal === "SIGHUP" ? 1 : 15)) as ExitCode;
  }
}

/** `ORIGIN=KEY`: the origin, and the Ed25519 public key, from 64 hex or a vkey named ORIGIN. */
function logOf(given: string): [string, Uint8Array] {
  const at = given.indexOf("=");
  const origin = at <= 0 ? "" : given.slice(0, at);
  const key = given.slice(at + 1);
  if (origin === "" || /[\s+]/.test(origin)) throw usage(`--log takes ORIGIN=KEY, an origin (no space, no +) and its key, not ${JSON.stringify(given)}`);
  if (/^[0-9a-f]{64}$/.test(key)) return [origin, Buffer.from(key, "hex")];
  try {
    const verifier = parseVerifierKey(key);
    if (verifier.type !== SIGNATURE_TYPE.ed25519) throw usage(`--log ${origin}: the vkey is of type 0x0${verifier.type.toString(16)}, not a log's (0x01)`);
    if (verifier.name !== origin) throw usage(`--log ${origin}: the vkey is named ${verifier.name}, not ${origin}: a log's key is named by its origin`);
    return [origin, verifier.publicKey];
  } catch (error) {
    if (error instanceof VerifierKeyError) throw usage(`--log ${origin}: the key is neither 64 hex nor a vkey: ${error.message}`);
    throw error;
  }
}

function addressOf(given: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(given);
  const port = match === null ? Number.NaN : Number(match[2]);
  if (match === null || !(port <= 65535)) throw usage(`--listen takes HOST:PORT (127.0.0.1:7380, 0.0.0.0:7380, [::]:7380), not ${JSON.stringify(given)}`);
  return { host: (match[1] ?? "").replace(/^\[(.*)\]$/, "$1"), port };
}

/** The witness key file: the key, refused when others may read it (a key others have read signs for them too). */
async function readWitnessKey(path: string): Promise<WitnessKey> {
  const refuse = (detail: string, help: string): CliError => new CliError({ code: "witness", problem: "key", detail: `--key ${path}: ${detail}`, help });
  let text: string;
  let mode: number;
  try {
    mode = (await stat(path)).mode;
    text = (await readInputFile(path, 4096)).toString("utf8");
  } catch (error) {
    throw refuse(describeIoError(error), "make one with `aegis witness keygen --out <PATH>`");
  }
  const witness = parseWitnessKey(text);
  if (typeof witness === "string") throw refuse(witness, "give the file `aegis witness keygen` wrote");
  if ((mode & 0o077) !== 0)
    throw refuse(
      `mode ${(mode & 0o777).toString(8).padStart(4, "0")}: others may read it`,
      `run \`chmod 600 ${path}\`, and make a new key if others may have read it`,
    );
  return witness;
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", command: "witness serve", message });
}
