import { Command, Option } from "clipanion";
import type { JsonObject } from "@aegis/format";
import { isJsonObject } from "@aegis/format/internal";
import { checkProof, describeProofCheck, parseVerifierKey, SIGNATURE_TYPE, VerifierKeyError, type NoteVerifier, type ProofCheck } from "@aegis/proof";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { readProofInput } from "../proof-files.js";
import { checkKeyArgument } from "../trust-store.js";

/** One proof's answer, as text and as `--json` print it. */
export interface Checked {
  readonly file: string;
  readonly ok: boolean;
  readonly check: ProofCheck["code"] | "too_few_witnesses";
  readonly detail: string;
  readonly line?: number;
  readonly size?: number;
  readonly origin?: string;
  readonly says?: string;
  readonly witnesses?: readonly string[];
}

export class ProofVerifyCommand extends AegisCommand {
  static override paths = [["proof", "verify"]];

  static override usage = Command.Usage({
    description: "Check Line proofs offline, with the signer's public key alone",
    details: `
      Checks each \`c2sp.org/tlog-proof@v1\` file (SPEC §19.3): the checkpoint inside is signed by one of the \`--key\`s under its origin, the Line it carries is in the checkpoint's tree at its index, and the Line's own signature, when it has one, checks under the same key. With \`--witness\`, cosignatures by those witnesses are checked too, and \`--min-witnesses K\` requires cosignatures by K distinct witness keys: a second cosignature line by one key, or one key given twice, counts once (so K above the distinct keys given is never met: too_few_witnesses). K above the number of \`--witness\` options is a usage error. Prints, per proof, what the Line says: its type, call, tool and verdict.

      No record is needed: a proof stands alone.

      Exit codes: 0 every proof holds, 1 any does not (or a usage error), 2 a proof could not be read.
    `,
    examples: [
      ["Check one proof", "aegis proof verify --key 3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c line-4.tlog-proof"],
      [
        "Check a call's proofs, requiring one witness",
        "aegis proof verify --key <HEX> --witness 'witness.example/w1+1a2b3c4d+BA...' --min-witnesses 1 proofs/*.tlog-proof",
      ],
    ],
  });

  keys = Option.Array("--key", [], { description: "A trusted public key, 64 lowercase hex (repeatable)" });
  witnessKeys = Option.Array("--witness", [], { description: "A witness's verifier key, <name>+<id>+<base64> (repeatable)" });
  minWitnesses = Option.String("--min-witnesses", "0", { description: "How many distinct witness keys must have cosigned each checkpoint (default 0)" });
  quiet = Option.Boolean("-q,--quiet", false, { description: "Print nothing on stdout: the exit code alone says it" });

  protected override get quietStdout(): boolean {
    return this.quiet;
  }

  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of text" });
  proofs = Option.Rest({ name: "PROOF", required: 1 });

  protected async run(): Promise<ExitCode> {
    if (this.keys.length === 0) throw usage("give the signer's public key with --key: a proof is checked against a key you trust, never one it carries");
    const keys = this.keys.map((k) => Buffer.from(checkKeyArgument(k), "hex"));
    const witnesses = this.witnessKeys.map(parseWitness);
    const min = Number(this.minWitnesses);
    // SPEC §19.3: a K above the --witness options given is refused before anything is read;
    // one above the distinct keys among them (a key given twice is one witness) is checked,
    // and answers too_few_witnesses, as the vectors say.
    if (!/^(0|[1-9][0-9]*)$/.test(this.minWitnesses) || min > witnesses.length) {
      throw usage(`--min-witnesses ${this.minWitnesses}: a number from 0 to the ${witnesses.length} --witness keys given`);
    }
    const results: Checked[] = [];
    for (const file of this.proofs) results.push(checked(file, checkProof(await readProofInput(file, "proof"), keys, witnesses), min));
    if (this.json) {
      await this.out(`${JSON.stringify({ schema: "aegis.proof-verify/1", ok: results.every((r) => r.ok), proofs: results }, null, 2)}\n`);
    } else {
      for (const r of results) await this.out(`${checkedText(r)}\n`);
    }
    return results.every((r) => r.ok) ? 0 : 1;
  }
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", command: "proof verify", message });
}

function parseWitness(text: string): NoteVerifier {
  try {
    const verifier = parseVerifierKey(text);
    if (verifier.type !== SIGNATURE_TYPE.cosignatureV1)
      throw usage(`--witness ${verifier.name}: a witness key has signature type 0x04 (a cosignature key), not 0x0${verifier.type}`);
    return verifier;
  } catch (error) {
    if (error instanceof VerifierKeyError) throw usage(`--witness ${JSON.stringify(text)}: ${error.message}`);
    throw error;
  }
}

/** One proof's line of `aegis proof verify`'s text (the demo prints the same). */
export function checkedText(r: Checked): string {
  return r.ok ? `${r.file}: OK: Line ${r.line ?? 0} of ${r.size ?? 0} in ${r.origin ?? ""}: ${r.says ?? ""}` : `${r.file}: FAILED: ${r.detail}`;
}

/** One proof checked, as `aegis proof verify` reports it: `min` witnesses required. */
export function checked(file: string, check: ProofCheck, min: number): Checked {
  if (check.code !== "included") return { file, ok: false, check: check.code, detail: describeProofCheck(check) };
  const witnesses = check.cosigned.map((c) => c.witness.name);
  const base = {
    file,
    line: check.proof.index + 1,
    size: check.checkpoint.size,
    origin: check.checkpoint.origin,
    says: `${says(check.line)}${check.lineSignature === "signed" ? " (signed)" : ""}`,
    witnesses,
  };
  if (witnesses.length < min)
    return {
      ...base,
      ok: false,
      check: "too_few_witnesses",
      detail: `cosigned by ${witnesses.length} distinct witness ${witnesses.length === 1 ? "key" : "keys"}; ${min} required`,
    };
  return { ...base, ok: true, check: check.code, detail: describeProofCheck(check) };
}

/** What a Line says, in one line: its type, its call and tool, its verdict. */
function says(line: JsonObject): string {
  const text = (key: string): string => (typeof line[key] === "string" ? String(line[key]) : "?");
  const member = (key: string, inner: string): string => {
    const value = line[key];
    const found = isJsonObject(value) ? value[inner] : undefined;
    return typeof found === "string" ? found : "?";
  };
  // A string's switch: the default is every other line_type a proof can carry, not a stand-in.
  switch (text("line_type")) {
    case "intent":
      return `intent of call ${text("call_id")}, tool ${text("tool_id")}`;
    case "outcome":
      return `outcome of call ${text("call_id")}, tool ${text("tool_id")}: policy ${member("policy", "status")}, execution ${member("execution", "status")}`;
    case "decision":
      return `decision on ${text("approval_id")}: ${member("verdict", "verdict")}`;
    case "open":
      return `open of a Session, key_id ${text("key_id")}`;
    case "close":
      return "close of a Session";
    default:
      return `a Line of type ${text("line_type")}`;
  }
}
