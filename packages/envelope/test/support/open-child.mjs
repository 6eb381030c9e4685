// Opens one Envelope store or pack, gets the digests given, and prints one JSON line: the
// damage it reported, each digest's answer, and the process's peak resident memory. Run by
// recovery.test.ts against the built package, so the bound is the peak of a fresh process
// that did only this, not the test runner's RSS at the mercy of its garbage collector.
import { openEnvelope } from "../../dist/index.js";

const [path, ...digests] = process.argv.slice(2);
const reader = await openEnvelope(path);
const answers = [];
for (const digest of digests) answers.push((await reader.get(digest)).code);
const damage = reader.damage.map((d) => ({ code: d.code, path: d.path, detail: d.detail }));
await reader.close();
// resourceUsage().maxRSS is in kibibytes: the high-water mark, which no collection lowers.
process.stdout.write(`${JSON.stringify({ damage, answers, peakBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
