// A redaction that is killed: it redacts the digests given on argv[3..] one by one in the
// store at argv[2], printing each digest once its redaction resolved (acknowledged). Run by
// kill-pack-redact.test.ts against the built package.
import { EnvelopeStore } from "../../dist/index.js";

const [dir, ...digests] = process.argv.slice(2);
const store = await EnvelopeStore.open(dir);
process.stdout.write("ready\n");
for (const digest of digests) {
  await store.redact(digest, "killed test");
  process.stdout.write(`${digest}\n`);
}
// Held open until killed: an unsettled await alone would let Node exit (code 13).
setInterval(() => {}, 60_000);
