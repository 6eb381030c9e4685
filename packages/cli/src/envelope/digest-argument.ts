import { type RequestDigest } from "@aegis/format";
import { tryParseDigest, describeHexFault } from "@aegis/format/internal";
import { CliError } from "../fault.js";

/**
 * A digest given on the command line: 64 lowercase hex, as a record spells it, or a usage
 * error. One spelling per digest: upper case is refused, not folded (SPEC §2). The Envelope
 * is content-addressed, so a request digest and a response digest name entries alike.
 */
export function parseDigestArgument(text: string, command: string): RequestDigest {
  const parsed = tryParseDigest("RequestDigest", text);
  if (!parsed.ok) throw new CliError({ code: "usage", message: `DIGEST must be 64 lowercase hex: ${describeHexFault(parsed.fault)}`, command });
  return parsed.digest;
}
