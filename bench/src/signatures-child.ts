import { readRecord, verifyStrict, verifyingKey, type VerifyingKey } from "@aegis/format";
import { signingInput } from "@aegis/format";

/**
 * The limit a verifier is measured against: the same signature checks it must make, made one
 * after another on one core. Reads the record, and for each signed Line times the strict
 * check alone (not the reading around it). `signatures-child <file>`; prints one JSON line:
 * how many checks, and the seconds they took together.
 */
const [path] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: signatures-child <file>");
let key: VerifyingKey | undefined;
let checks = 0;
let nanoseconds = 0n;
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
  const message = Buffer.from(signingInput(value), "utf8");
  const bytes = Buffer.from(signature, "hex");
  const started = process.hrtime.bigint();
  const ok = verifyStrict(key, message, bytes);
  nanoseconds += process.hrtime.bigint() - started;
  if (!ok) throw new Error(`row ${row.row}: the signature does not verify`);
  checks++;
}
process.stdout.write(`${JSON.stringify({ checks, seconds: Number(nanoseconds) / 1e9 })}\n`);
