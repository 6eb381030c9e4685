import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/canonical-json.js";
import type { ParkSummary } from "../src/index.js";
import { BIN, call } from "./support.js";
import { workspace, wrapMirror, type Recorded, type WrapProcess } from "./wrap-process.js";

/**
 * `aegis approve --list` against a real `aegis wrap` (SPEC §17.5): what a person is shown
 * before approving a parked call is the call, its arguments and the scope an approval grants.
 */
function cli(args: readonly string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, AEGIS_DEBUG: "" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A Policy Set that parks `write_note` (and a tool named with a right-to-left override), and bindings for its path. */
async function parkingWrap(): Promise<{ w: Recorded; wrap: WrapProcess; control: string }> {
  const w = await workspace();
  const policy = join(w.dir, "policy.yaml");
  writeFileSync(
    policy,
    `version: 2
default: allow
rules:
  - id: park-notes
    action: pending_approval
    tool: write_note
  - id: park-odd
    action: pending_approval
    tool: "write\\u202Eeton"
`,
  );
  const bindings = join(w.dir, "bindings.yaml");
  writeFileSync(
    bindings,
    "version: 1\ntools:\n  - tool: write_note\n    capability: fs.write\n    paths:\n      - { pointer: /params/arguments/path, access: write }\n",
  );
  const control = join(w.dir, "c.sock");
  const wrap = wrapMirror(w, ["--policy", policy, "--bindings", bindings, "--control", control]);
  await wrap.stderrHas(`approvals: control socket ${control}`);
  return { w, wrap, control };
}

async function park(wrap: WrapProcess, id: number, name: string, args: Record<string, unknown>): Promise<string> {
  wrap.send(call(id, name, args));
  const refusal = (await wrap.nextJson()) as { result: { _meta: Record<string, { code: string; approval_id: string }> } };
  const facts = refusal.result._meta["io.github.aegis-ts/refusal"];
  expect(facts?.code).toBe("PENDING_APPROVAL");
  const approvalId = facts?.approval_id ?? "";
  await wrap.stderrHas(`parked for approval ${approvalId}`);
  return approvalId;
}

function listed(control: string): readonly ParkSummary[] {
  const run = cli(["approve", "--list", "--json", "--control", control]);
  expect(run.status, run.stderr).toBe(0);
  const doc = JSON.parse(run.stdout) as { ok: boolean; op: string; pending: ParkSummary[] };
  expect(doc).toMatchObject({ ok: true, op: "list" });
  return doc.pending;
}

describe("aegis approve --list, against a running aegis wrap", () => {
  it("[M17.11] says so when nothing is parked, and after the only park is answered", async () => {
    const { w, wrap, control } = await parkingWrap();
    const empty = cli(["approve", "--list", "--control", control]);
    expect(empty.status, empty.stderr).toBe(0);
    expect(empty.stdout).toBe("no call is parked: nothing waits for an answer\n");
    expect(listed(control)).toEqual([]);

    const approvalId = await park(wrap, 1, "write_note", { path: join(w.dir, "a.txt"), text: "x" });
    expect(listed(control).map((p) => p.approval_id)).toEqual([approvalId]);
    expect(cli(["approve", approvalId, "--deny", "--reason", "not today", "--control", control]).status).toBe(0);
    expect(cli(["approve", "--list", "--control", control]).stdout).toBe("no call is parked: nothing waits for an answer\n");
    wrap.end();
    expect((await wrap.finished()).code).toBe(0);
  });

  it("[M17.11] shows each parked call's tool, rule, arguments and the scope an approval grants, in text and in --json", async () => {
    const { w, wrap, control } = await parkingWrap();
    const path = join(w.dir, "notes", "plan.md");
    const args = { text: "ship on friday", path, tags: ["a", 1, null] };
    const approvalId = await park(wrap, 1, "write_note", args);
    const canonical = canonicalJson(args) ?? "";
    expect(canonical).toBe(`{"path":${JSON.stringify(path)},"tags":["a",1,null],"text":"ship on friday"}`);

    const [summary, ...rest] = listed(control);
    expect(rest).toEqual([]);
    expect(summary).toMatchObject({
      approval_id: approvalId,
      tool_id: "write_note",
      rule: "park-notes",
      arguments: { code: "json", json: canonical, bytes: Buffer.byteLength(canonical), truncated: false },
      scope: { tool_id: "write_note", fs: { read_paths: [], write_paths: [path] } },
    });
    expect(Date.parse(summary?.parked_at ?? "")).not.toBeNaN();

    const text = cli(["approve", "--list", "--control", control]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      [
        "1 call parked; approving one lets one retry of that very call (same tool, same arguments) run, within its scope",
        "",
        approvalId,
        '  tool       "write_note"',
        '  rule       "park-notes"',
        `  parked at  ${summary?.parked_at ?? ""}`,
        `  arguments  ${canonical}`,
        '  scope      tool "write_note"',
        `             write ${JSON.stringify(path)}`,
        "",
      ].join("\n"),
    );
    wrap.end();
    await wrap.finished();
  });

  it("[M17.11] bounds a long argument at 4096 bytes, cut between two characters, and says how much there was", async () => {
    const { w, wrap, control } = await parkingWrap();
    const path = join(w.dir, "big.txt");
    // Pad so that byte 4096 falls inside a four-byte character (a surrogate pair in JavaScript).
    const head = Buffer.byteLength(`{"path":${JSON.stringify(path)},"text":"`);
    const pad = "a".repeat((((4096 - head - 2) % 4) + 4) % 4);
    const args = { path, text: `${pad}${"\u{1F600}".repeat(50_000)}` };
    const canonical = canonicalJson(args) ?? "";
    expect((4096 - head - pad.length) % 4).toBe(2);
    await park(wrap, 7, "write_note", args);

    const [summary] = listed(control);
    const shown = summary?.arguments;
    if (shown?.code !== "json") throw new Error(`arguments not listed as json: ${JSON.stringify(shown)}`);
    expect(shown.truncated).toBe(true);
    expect(shown.bytes).toBe(Buffer.byteLength(canonical));
    expect(Buffer.byteLength(shown.json)).toBe(4094);
    expect(shown.json.isWellFormed()).toBe(true);
    expect(canonical.startsWith(shown.json)).toBe(true);

    const text = cli(["approve", "--list", "--control", control]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain(`  arguments  ${shown.json}\n`);
    expect(text.stdout).toContain(`             [truncated: the first 4094 of ${shown.bytes} bytes shown; --json carries the same]\n`);
    expect(Buffer.byteLength(text.stdout)).toBeLessThan(6000);
    wrap.end();
    await wrap.finished();
  });

  it("[M17.11] escapes what a terminal could act on or hide text behind, in the tool's name and its arguments", async () => {
    const { w, wrap, control } = await parkingWrap();
    const args = { path: join(w.dir, "n.txt"), text: "\u009b31mred\u2028\u200fnext\u00a0" };
    const approvalId = await park(wrap, 3, "write\u202Eeton", args);
    const [summary] = listed(control);
    expect(summary).toMatchObject({ approval_id: approvalId, tool_id: "write\u202Eeton", arguments: { code: "json", json: canonicalJson(args) } });

    const text = cli(["approve", "--list", "--control", control]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).not.toMatch(/[\u009b\u2028\u200f\u202e\u00a0]/);
    expect(text.stdout).toContain('  tool       "write\\u202eeton"\n');
    expect(text.stdout).toContain(`  arguments  {"path":${JSON.stringify(args.path)},"text":"\\u009b31mred\\u2028\\u200fnext\\u00a0"}\n`);
    // What is shown is still the JSON of the arguments.
    const line = text.stdout.split("\n").find((l) => l.startsWith("  arguments  ")) ?? "";
    expect(JSON.parse(line.slice("  arguments  ".length))).toEqual(args);
    wrap.end();
    await wrap.finished();
  });
});
