// A writer that is killed: it puts values from 8 concurrent workers and prints each digest
// on stdout once its put has resolved (once it is acknowledged). Run by crash.test.ts
// against the built package.
import { randomBytes } from "node:crypto";
import { EnvelopeStore } from "../../dist/index.js";

const [dir] = process.argv.slice(2);
const store = await EnvelopeStore.open(dir, { segmentBytes: 256 * 1024 });
process.stdout.write("ready\n");
let next = 0;
async function worker() {
  for (;;) {
    const i = next++;
    // Mostly small values, now and then one of 100 kB that spans many pages.
    const bytes = randomBytes(i % 40 === 0 ? 100_000 : 200 + ((i * 37) % 900));
    const digest = await store.putRequest(bytes);
    process.stdout.write(`${digest}\n`);
  }
}
await Promise.all(Array.from({ length: 8 }, worker));
