import { appendFileSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, SigningKey } from "@aegis/format";
import { STACK_TRACE, aegis, tempDir } from "./support.js";

const KEY = SigningKey.fromSeed(new Uint8Array(32).fill(9));

async function recordWithTornTail(): Promise<{ path: string; torn: string }> {
  const path = join(tempDir(), "run.aarl");
  const writer = await RecordWriter.open(path, { key: KEY });
  await writer.close();
  const torn = '{"schema_version":2,"line_type":"intent","seq":2,"call_id":"cut sho';
  appendFileSync(path, torn);
  return { path, torn };
}

describe("aegis repair", () => {
  it("moves the torn last line aside, keeps every whole line, and lets a writer append again", async () => {
    const { path, torn } = await recordWithTornTail();
    const before = readFileSync(path, "utf8");
    // A writer refuses the torn file, and its error says what to run.
    const refused = await RecordWriter.open(path, { key: KEY }).then(
      () => "opened",
      (error: unknown) => String(error),
    );
    expect(refused).toContain("torn final line");

    const run = aegis(["repair", path]);
    expect(run.stdout).toBe(
      `repaired ${path}: moved the torn last ${torn.length} bytes, from byte ${before.length - torn.length}, to ${path}.torn-${before.length - torn.length}\n`,
    );
    expect(run.status).toBe(0);
    expect(readFileSync(`${path}.torn-${before.length - torn.length}`, "utf8")).toBe(torn);
    expect(readFileSync(path, "utf8")).toBe(before.slice(0, before.length - torn.length));

    const writer = await RecordWriter.open(path, { key: KEY });
    await writer.close();
    expect(aegis(["verify", path]).stdout).toMatch(/^Verified/);
    expect(aegis(["repair", path]).stdout).toBe(`nothing to repair: ${path} ends in a whole line\n`);
  });

  it("a last line the verifier calls Tampered is not cut: exit 1, the verifier's verdict and a help line, the file untouched", async () => {
    const path = join(tempDir(), "run.aarl");
    const writer = await RecordWriter.open(path, { key: KEY });
    await writer.close();
    // Whole, and it parses; but a null has no canonical form: the verifier calls it Tampered.
    const row = '{"schema_version":2,"line_type":"intent","seq":2,"call_id":null}\n';
    appendFileSync(path, row);
    const before = readFileSync(path);

    const verify = aegis(["verify", path]);
    expect(verify.status).toBe(1);
    const verdict = verify.stdout.split("\n")[0] ?? "";
    expect(verdict).toBe(
      "Tampered: line 3: outside the canonical value space, so it has no reproducible hash: null at $.call_id; absent fields must be omitted, never null",
    );

    for (const args of [
      ["repair", path],
      ["repair", "--json", path],
    ]) {
      const run = aegis(args);
      expect(run.status).toBe(1);
      expect(run.stdout).toBe("");
      const [error, help, rest] = run.stderr.split("\n");
      expect(error).toBe(
        `error: ${path} ends in a line the verifier calls Tampered, not a torn write (${verdict}); it starts at byte offset ${before.length - row.length} and is evidence: refusing to chain onto it or cut it off`,
      );
      expect(help).toBe(
        `help: keep ${path} as it is for whoever audits it (\`aegis verify ${path}\` gives the verdict), and record the next Session in a new file`,
      );
      expect(rest).toBe("");
      expect(readFileSync(path)).toEqual(before);
      expect(readdirSync(dirname(path))).toEqual(["run.aarl"]);
    }
  });

  it("--json says the same", async () => {
    const { path, torn } = await recordWithTornTail();
    const doc = JSON.parse(aegis(["repair", "--json", path]).stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({ schema: "aegis.repair/1", path, repaired: true, bytes: torn.length });
  });

  it.each([
    ["a missing file", (dir: string) => join(dir, "none.aarl"), /^error: read .*none\.aarl: No such file or directory/],
    ["a directory", (dir: string) => dir, /^error: read .*: Is a directory/],
  ])("%s: exit 2, error and help, no stack trace", (_name, pathOf, error) => {
    const run = aegis(["repair", pathOf(tempDir())]);
    expect(run.stderr).toMatch(error);
    expect(run.stderr).toMatch(/\nhelp: /);
    expect(run.stderr).not.toMatch(STACK_TRACE);
    expect(run.status).toBe(2);
  });

  it("a file a live writer holds is not touched", async () => {
    const { path } = await recordWithTornTail();
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.pid, host: (await import("node:os")).hostname() }));
    const before = readFileSync(path, "utf8");
    const run = aegis(["repair", path]);
    expect(run.stderr).toMatch(new RegExp(`^error: ${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is being written by pid ${process.pid}`));
    expect(run.status).toBe(2);
    expect(readFileSync(path, "utf8")).toBe(before);
  });

  it("- is refused: repair changes a file in place", () => {
    const run = aegis(["repair", "-"]);
    expect(run.stderr).toMatch(/^error: repair changes a record file in place: give its path, not -\n/);
    expect(run.status).toBe(1);
  });
});
