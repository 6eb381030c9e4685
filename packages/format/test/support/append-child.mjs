// A second process on one record (load.test.ts, against the built package). `open`: try to
// open the record, print `held` or `refused <code>`, and hold it until killed. `append`:
// open it and make calls from 8 concurrent callers until killed, printing `ready` once open.
import { RecordWriter, RecordWriterError, PolicySetHash, RequestDigest, SigningKey } from "../../dist/index.js";

const [mode, path] = process.argv.slice(2);
const key = SigningKey.fromSeed(new Uint8Array(32).fill(3));
let writer;
try {
  writer = await RecordWriter.open(path, { key });
} catch (error) {
  if (!(error instanceof RecordWriterError)) throw error;
  process.stdout.write(`refused ${error.fault.code}\n`);
  process.exit(0);
}
process.stdout.write(mode === "open" ? "held\n" : "ready\n");
if (mode === "append") {
  const policy = PolicySetHash.of("load");
  let next = 0;
  const caller = async () => {
    for (;;) {
      // Paced (about 1,600 calls a second in all), so that a reader's file stays small.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const call_id = `c${next++}`;
      await writer.beginCall({ call_id, tool_id: "t", policy_set_hash: policy, request_digest: RequestDigest.of(Buffer.from(call_id)) });
      await writer.endCall(call_id, {
        policy: { status: "allowed" },
        capability: { status: "denied", reason: "n/a" },
        execution: { status: "success" },
        decision_axes: {},
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, caller));
}
// Held open until killed: an unsettled await alone would let Node exit (code 13).
setInterval(() => {}, 60_000);
