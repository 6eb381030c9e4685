import { SIGNATURE_TYPE, VerifierKeyError, parseVerifierKey, type NoteVerifier, type PushResult } from "@aegis/proof";
import { CliError } from "./fault.js";

/**
 * `--witness VKEY@URL` (SPEC §19.6): a witness's verifier key (type 0x04, which holds no `@`)
 * and the prefix its `add-checkpoint` is under.
 */
export interface WitnessTarget {
  readonly verifier: NoteVerifier;
  readonly url: string;
}

/** Read each `--witness VKEY@URL`; a usage error of `command` when one is not that. */
export function witnessTargets(given: readonly string[], command: string): WitnessTarget[] {
  return given.map((text) => {
    const at = text.indexOf("@");
    const usage = (detail: string): CliError => new CliError({ code: "usage", command, message: `--witness ${JSON.stringify(text)}: ${detail}` });
    if (at <= 0) throw usage("a witness is VKEY@URL: its verifier key, @, and the URL its add-checkpoint is under");
    let verifier: NoteVerifier;
    try {
      verifier = parseVerifierKey(text.slice(0, at));
    } catch (error) {
      if (error instanceof VerifierKeyError) throw usage(`the verifier key: ${error.message}`);
      throw error;
    }
    if (verifier.type !== SIGNATURE_TYPE.cosignatureV1)
      throw usage(`the key is of type 0x0${verifier.type.toString(16)}, not a witness's (0x04, cosignature/v1)`);
    let url: URL;
    try {
      url = new URL(text.slice(at + 1));
    } catch {
      throw usage("the URL after @ is not one");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw usage(`the URL is ${url.protocol}, not http: or https:`);
    return { verifier, url: url.href.replace(/\/+$/, "") };
  });
}

/** What came of a push, for stderr: nothing for a cosignature; evidence and faults named by URL. */
export function describePush(result: PushResult): string | undefined {
  switch (result.code) {
    case "cosigned":
      return undefined;
    case "fault":
      return `witness ${result.url}: ${result.detail}; it did not cosign`;
    case "evidence":
      return `witness ${result.url}: ${result.detail}`;
  }
}
