import { readFileSync } from "node:fs";
import { parsePolicySet, recheck } from "@aegis/policy";
import { RecheckTally } from "@aegis/policy/internal";

/**
 * Recheck one file under one Policy Set in a process of its own, so that peak RSS is the
 * recheck's alone. Prints one JSON line: the tally, rows skipped, the time, and the
 * process's peak RSS. The set is read and parsed before the clock starts.
 */
const [path, policyPath] = process.argv.slice(2);
if (path === undefined || policyPath === undefined) throw new Error("usage: recheck-child <file> <policy.yaml>");
const set = parsePolicySet(readFileSync(policyPath, "utf8"));
const tally = new RecheckTally();
let skipped = 0;
const started = process.hrtime.bigint();
for await (const verdict of recheck(path, { code: "policy", policy: set }, { onSkippedRow: () => skipped++ })) tally.add(verdict);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ summary: tally.summary, skipped, seconds, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
