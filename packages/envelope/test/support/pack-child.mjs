// A `writePack` that is killed: it packs every entry of the store at argv[2] into argv[3],
// printing `packing` when it starts and `packed` when writePack resolved. Run by
// kill-pack-redact.test.ts against the built package.
import { openEnvelope, writePack } from "../../dist/index.js";

const [store, out] = process.argv.slice(2);
const source = await openEnvelope(store);
const digests = [];
for await (const entry of source.entries()) digests.push(entry.digest);
process.stdout.write("packing\n");
await writePack(source, digests, out);
process.stdout.write("packed\n");
// Held open until killed: an unsettled await alone would let Node exit (code 13).
setInterval(() => {}, 60_000);
