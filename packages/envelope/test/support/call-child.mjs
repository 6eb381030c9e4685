// A recording runtime that is killed: it repairs the record if a kill left it torn, opens a
// new Session (chained to the old tail), and makes calls from 8 concurrent workers through
// a Chain writer with an Envelope. Each acknowledged Line is printed on stdout once the
// writer has resolved it: `open <line_hash>`, `intent <call_id> <request_digest>`,
// `outcome <call_id> <response_digest>`. Run by chain-crash.test.ts against the built packages.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { RecordWriter, PolicySetHash, SigningKey, repairTornTail } from "@aegis/format";
import { EnvelopeStore } from "../../dist/index.js";

const [record, dir, run] = process.argv.slice(2);
const key = SigningKey.fromSeed(new Uint8Array(32).fill(7));
const policy = PolicySetHash.of("crash-test");
if (existsSync(record)) await repairTornTail(record);
const store = await EnvelopeStore.open(dir, { segmentBytes: 256 * 1024 });
const writer = await RecordWriter.open(record, { key, envelope: store });
process.stdout.write(`open ${writer.head}\n`);
let next = 0;
async function worker() {
  for (;;) {
    const callId = `r${run}-c${next++}`;
    const request = randomBytes(100 + (next % 7) * 300);
    const response = randomBytes(next % 50 === 0 ? 100_000 : 50 + (next % 5) * 200);
    const begun = await writer.beginCall({ call_id: callId, tool_id: "fs.read", policy_set_hash: policy, request });
    process.stdout.write(`intent ${callId} ${begun.lineHash}\n`);
    await writer.endCall(callId, {
      policy: { status: "allowed" },
      capability: { status: "denied", reason: "n/a" },
      execution: { status: "success" },
      decision_axes: {},
      response,
    });
    process.stdout.write(`outcome ${callId}\n`);
  }
}
await Promise.all(Array.from({ length: 8 }, worker));
