import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { parsePolicySet } from "@aegis/policy";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recordingTransport } from "../src/index.js";
import { readFrame } from "../src/strict-frame.js";
import { KEY, linesOf, sha256, tempDir, verdictOf } from "./support.js";
import { WrapProcess, workspace } from "./wrap-process.js";

/**
 * The no-bypass property (issue 26, design §8). Hostile framings of `tools/call` go through
 * `aegis wrap` and through `recordingTransport` to a spy server, a real process that logs
 * every frame it receives. The oracle is two forgiving readers, Node's `JSON.parse` and
 * Python's `json` (with the ways a Python text stream splits lines): with a Policy Set that
 * denies `rm`, no frame either reads as a call of `rm` reaches the server; with and without
 * one, every frame the server receives that either reads as a `tools/call` is in the record;
 * and no frame the strict reader refuses reaches the server.
 *
 * `AEGIS_PROPERTY_RUNS` sets the number of runs (a long run: 500), `AEGIS_PROPERTY_SEED`
 * replays one; the seed of every run is printed.
 */
const SPY = fileURLToPath(new URL("./fixtures/spy-server.mjs", import.meta.url));
const READERS = fileURLToPath(new URL("./fixtures/forgiving_readers.py", import.meta.url));
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const RUNS = Number(process.env["AEGIS_PROPERTY_RUNS"] ?? 10);
const SEED = Number(process.env["AEGIS_PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

const POLICY = `version: 2
default: allow
rules:
  - { id: no-rm, action: deny, tool: rm }
`;

/** The tool names of every `tools/call` that Node's or Python's forgiving readers find in each frame. */
function forgivingCalls(frames: readonly Buffer[]): (string | null)[][] {
  const python = spawnSync(PYTHON, [READERS], { input: frames.map((f) => f.toString("hex")).join("\n") + "\n", encoding: "utf8", maxBuffer: 64 << 20 });
  if (python.status !== 0) throw new Error(`the Python readers failed: ${python.stderr}`);
  const pythonNames = python.stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as (string | null)[]);
  return frames.map((frame, i) => [...nodeCalls(frame), ...(pythonNames[i] ?? [])]);
}

function nodeCalls(frame: Buffer): (string | null)[] {
  const names: (string | null)[] = [];
  const text = frame.toString("utf8");
  for (const piece of [text, ...(text.includes("\r") ? text.split(/\r\n|\r/u) : [])]) {
    let value: unknown;
    try {
      value = JSON.parse(piece);
    } catch {
      continue;
    }
    for (const element of Array.isArray(value) ? (value as unknown[]) : [value]) {
      if (typeof element !== "object" || element === null || (element as { method?: unknown }).method !== "tools/call") continue;
      const params = (element as { params?: unknown }).params;
      const name = typeof params === "object" && params !== null ? (params as { name?: unknown }).name : undefined;
      names.push(typeof name === "string" ? name : null);
    }
  }
  return names;
}

/** What the spy received, frame by frame. */
function spied(log: string): Buffer[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => Buffer.from(l, "hex"));
}

/** The property's three assertions over what the server received and what was recorded. */
async function judge(received: readonly Buffer[], audit: string, enforcing: boolean): Promise<void> {
  const recorded = new Set(linesOf(audit).flatMap((l) => (l.line_type === "intent" ? [String(l["request_digest"])] : [])));
  const calls = forgivingCalls(received);
  received.forEach((frame, i) => {
    const shown = JSON.stringify(frame.toString("latin1"));
    expect(readFrame(frame).ok, `the server received a frame the strict reader refuses: ${shown}`).toBe(true);
    const names = calls[i] ?? [];
    if (enforcing) expect(names, `a call of rm reached the server: ${shown}`).not.toContain("rm");
    if (names.length > 0) expect(recorded.has(sha256(frame)), `a call reached the server unrecorded: ${shown}`).toBe(true);
  });
  expect(await verdictOf(audit)).toBe("verified");
}

// Hostile framings of one call, built from its parts' spellings (SPEC §17.1's list, and more).
const ids = fc.constantFrom("1", '"1"', "1.0", "1e0", "-0", "null", "9007199254740993", "[1]", '{"a":1}', "true", "");
const methods = fc.constantFrom(
  '"tools/call"',
  '"tools\\/call"',
  '"tools/\\u0063all"',
  '"Tools/call"',
  '" tools/call"',
  '"tools/call","method":"ping"',
  '"ping","method":"tools/call"',
);
const names = fc.constantFrom('"rm"', '"\\u0072m"', '"echo"', '"rm\\ud800"', '"\\ud800"', '"echo","name":"rm"', '"rm","name":"echo"', "7");
const deep = (n: number): string => `${"[".repeat(n)}${"]".repeat(n)}`;
const args = fc.constantFrom(
  "{}",
  '{"path":"/x"}',
  '{"n":NaN}',
  '{"n":Infinity}',
  '{"n":-Infinity}',
  '{"n":1e400}',
  '{"n":123456789012345678901}',
  `{"d":${deep(126)}}`,
  `{"d":${deep(200)}}`,
  `{"d":${deep(1100)}}`,
  '{"s":"\\udc00"}',
  '{"a":1,"a":2}',
);
const wrappers = fc.constantFrom("plain", "batch", "batch_with_ping", "bom", "spaces", "crlf", "inner_cr", "split_by_cr", "trailing", "two_values");
const byteNoise = fc.option(fc.record({ at: fc.nat(), byte: fc.constantFrom(0xff, 0xc0, 0x80, 0xed, 0x0d, 0x00, 0x22, 0x5c, 0x7d) }), { nil: undefined });

const hostileFrame = fc
  .record({ id: ids, method: methods, name: names, args, wrapper: wrappers, noise: byteNoise })
  .map(({ id, method, name, args, wrapper, noise }) => {
    const call = `{"jsonrpc":"2.0",${id === "" ? "" : `"id":${id},`}"method":${method},"params":{"name":${name},"arguments":${args}}}`;
    const ping = '{"jsonrpc":"2.0","id":99,"method":"ping"}';
    const text = {
      plain: call,
      batch: `[${call}]`,
      batch_with_ping: `[${ping},${call}]`,
      bom: `\ufeff${call}`,
      spaces: ` \t${call} `,
      crlf: `${call}\r`,
      inner_cr: `${ping}\r${call}`,
      split_by_cr: `{"jsonrpc":"2.0",\r"id":5,"method":"tools/call","params":{"name":"rm"}}`,
      trailing: `${call}x`,
      two_values: `${ping} ${call}`,
    }[wrapper];
    const bytes = Buffer.from(text, "utf8");
    if (noise !== undefined && bytes.length > 0) bytes[noise.at % bytes.length] = noise.byte;
    return bytes;
  });

/** A frame and how its bytes are cut into writes. */
const sent = fc.record({ frame: hostileFrame, cuts: fc.array(fc.nat(), { maxLength: 3 }) });

describe("no frame gets around wrap's reading (issue 26)", () => {
  it(`[M17.5] [M17.8] through aegis wrap: enforced, recorded, strict (seed ${SEED})`, async () => {
    console.log(`no-bypass property through aegis wrap: seed ${SEED}, ${RUNS} runs (AEGIS_PROPERTY_SEED, AEGIS_PROPERTY_RUNS)`);
    await fc.assert(
      fc.asyncProperty(fc.array(sent, { minLength: 1, maxLength: 12 }), fc.boolean(), async (frames, enforcing) => {
        const w = await workspace();
        const log = join(w.dir, "spy.log");
        const policy = join(w.dir, "policy.yaml");
        writeFileSync(policy, POLICY);
        const wrap = new WrapProcess(
          [
            "wrap",
            "--audit",
            w.audit,
            "--signing-key",
            w.key,
            ...(enforcing ? ["--policy", policy, "--control", join(w.dir, "c")] : []),
            "--",
            process.execPath,
            SPY,
          ],
          { env: { SPY_LOG: log } },
        );
        for (const { frame, cuts } of frames) {
          const points = [...new Set(cuts.map((c) => c % (frame.length + 1)))].sort((a, b) => a - b);
          let from = 0;
          for (const p of [...points, frame.length]) {
            wrap.send(frame.subarray(from, p), false);
            from = p;
          }
          wrap.send("", true);
        }
        wrap.end();
        await wrap.finished();
        await judge(spied(log), w.audit, enforcing);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);

  it(`[M17.5] [M17.8] through recordingTransport: enforced, recorded, strict (seed ${SEED})`, async () => {
    console.log(`no-bypass property through recordingTransport: seed ${SEED}, ${RUNS} runs`);
    const tricky = fc.constantFrom("plain", "getter", "to_json", "surrogate", "nan", "deep", "big", "batch");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ name: fc.constantFrom("rm", "echo", "r\u006d"), trick: tricky, id: fc.oneof(fc.nat(), fc.string()) }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.boolean(),
        async (calls, enforcing) => {
          const dir = tempDir();
          const log = join(dir, "spy.log");
          const audit = join(dir, "record.aarl");
          const transport = await recordingTransport(
            new StdioClientTransport({
              command: process.execPath,
              args: [SPY],
              env: { ...process.env, SPY_LOG: log } as Record<string, string>,
              stderr: "pipe",
            }),
            {
              audit,
              key: KEY,
              ...(enforcing ? { policy: parsePolicySet(POLICY) } : {}),
            },
          );
          await transport.start();
          for (const [i, c] of calls.entries()) {
            await transport.send(hostileMessage(c.name, c.trick, typeof c.id === "number" ? c.id + i * 1000 : `${c.id}-${i}`)).catch(() => undefined);
          }
          await transport.close();
          await judge(spied(log), audit, enforcing);
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);
});

/** A message object that writes one thing when first written and may write another after. */
function hostileMessage(name: string, trick: string, id: number | string): JSONRPCMessage {
  const base = { jsonrpc: "2.0" as const, id, method: "tools/call" };
  switch (trick) {
    case "getter": {
      // "echo" the first time the name is read, the chosen name after: a second serialization differs.
      let reads = 0;
      const params = { arguments: {} } as Record<string, unknown>;
      Object.defineProperty(params, "name", { enumerable: true, get: () => (reads++ === 0 ? "echo" : name) });
      return { ...base, params } as JSONRPCMessage;
    }
    case "to_json": {
      let writes = 0;
      return {
        ...base,
        params: { name: "echo", arguments: {} },
        toJSON: () => ({ ...base, params: { name: writes++ === 0 ? "echo" : name, arguments: {} } }),
      } as unknown as JSONRPCMessage;
    }
    case "surrogate":
      return { ...base, params: { name: `${name}\ud800`, arguments: {} } } as JSONRPCMessage;
    case "nan":
      return { ...base, params: { name, arguments: { n: Number.NaN, m: Number.POSITIVE_INFINITY, z: -0 } } } as JSONRPCMessage;
    case "deep": {
      let nested: unknown = 1;
      for (let k = 0; k < 200; k++) nested = [nested];
      return { ...base, params: { name, arguments: { nested } } } as JSONRPCMessage;
    }
    case "big":
      return { ...base, params: { name, arguments: { n: 2 ** 60 } } } as JSONRPCMessage;
    case "batch":
      return [{ ...base, params: { name, arguments: {} } }] as unknown as JSONRPCMessage;
    default:
      return { ...base, params: { name, arguments: {} } } as JSONRPCMessage;
  }
}
