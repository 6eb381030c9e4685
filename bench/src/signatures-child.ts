import { readRecord, signingInput, verifyStrict, verifyingKey, type VerifyingKey } from "@aegis/format/internal";

/**
 * The limit a verifier is measured against: the same signature checks it must make, made one
 * after another on one core. Reads the record and keeps each signed Line's key, signing input
 * and signature, then times checking them all back to back (as a thread checks a batch), so
 * that what is timed is the checks and nothing between them. `signatures-child <file>`;
 * prints one JSON line: how many checks, and the seconds they took together.
 */
const [path] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: signatures-child <file>");
let key: VerifyingKey | undefined;
const checks: { readonly key: VerifyingKey; readonly message: Buffer; readonly signature: Buffer }[] = [];
for await (const row of readRecord(path)) {
  if (row.code !== "object") continue;
  const value = row.value;
  const publicKey = value["public_key"];
  if (row.lineType === "open" && typeof publicKey === "string") {
    const decoded = verifyingKey(Buffer.from(publicKey, "hex"));
    if (typeof decoded === "string") throw new Error(`open at row ${row.row}: ${decoded}`);
    key = decoded;
  }
  const signature = value["signature"];
  if (typeof signature !== "string" || key === undefined) continue;
  checks.push({ key, message: Buffer.from(signingInput(value), "utf8"), signature: Buffer.from(signature, "hex") });
}
const started = process.hrtime.bigint();
for (const check of checks) if (!verifyStrict(check.key, check.message, check.signature)) throw new Error("a signature does not verify");
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ checks: checks.length, seconds })}\n`);
