import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { INSECURE_DEV_SEED } from "@aegis/format";
import { describe, expect, it } from "vitest";
import { GOLDEN, ROOT, STACK_TRACE, aegis, tempDir } from "./support.js";

const GO = (file: string): string => readFileSync(join(ROOT, "vectors/external/c2sp-go", file), "utf8");

/** The development key as a key file: the key Go's checkpoints over the golden Session were made with. */
function devKeyFile(dir: string): string {
  const path = join(dir, "dev.key");
  writeFileSync(path, Buffer.from(INSECURE_DEV_SEED).toString("hex"), { mode: 0o600 });
  return path;
}

describe("aegis checkpoint", () => {
  it("prints Go's checkpoints of the golden Session byte for byte, whole and of its first 5 Lines", () => {
    const key = devKeyFile(tempDir());
    for (const [size, args] of [
      [12, []],
      [5, ["--size", "5"]],
    ] as const) {
      const run = aegis(["checkpoint", "--signing-key", key, "--origin", "example.org/aegis/test", ...args, GOLDEN]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toBe(GO(`size-${size}/checkpoint`));
      expect(run.stderr).toContain("warning: signed with the published development key");
    }
  });

  it("says the same in --json, under the record's own origin by default", () => {
    const key = devKeyFile(tempDir());
    const text = aegis(["checkpoint", "--signing-key", key, GOLDEN]);
    const json = aegis(["checkpoint", "--json", "--signing-key", key, GOLDEN]);
    const doc = JSON.parse(json.stdout) as { schema: string; origin: string; size: number; root: string; checkpoint: string };
    expect(doc.schema).toBe("aegis.checkpoint/1");
    expect(doc.origin).toMatch(/^aegis\.invalid\/record\/[0-9a-f]{64}$/);
    expect(doc.size).toBe(12);
    expect(doc.checkpoint).toBe(text.stdout);
    expect(text.stdout.startsWith(`${doc.origin}\n12\n${doc.root}\n\n`)).toBe(true);
  });

  it("refuses more Lines than the record holds, another Session's key and a tampered record: exit 1, no stack trace", () => {
    const dir = tempDir();
    const key = devKeyFile(dir);
    const tooMany = aegis(["checkpoint", "--signing-key", key, "--size", "13", GOLDEN]);
    expect(tooMany.status).toBe(1);
    expect(tooMany.stderr).toMatch(/^error: cannot checkpoint .*: it has fewer than 13 Lines that verify\nhelp: choose a --size/m);

    aegis(["keygen", "--out", join(dir, "other.key")]);
    const other = aegis(["checkpoint", "--signing-key", join(dir, "other.key"), GOLDEN]);
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/Line 12 is in a Session signed by 3de537a0.*, not by this key/);

    const tampered = join(dir, "tampered.aarl");
    writeFileSync(tampered, readFileSync(GOLDEN, "utf8").replace('"tool_id":"chatty"', '"tool_id":"chattY"'));
    const broken = aegis(["checkpoint", "--signing-key", key, tampered]);
    expect(broken.status).toBe(1);
    expect(broken.stderr).toMatch(/it does not verify: Tampered/);
    for (const run of [tooMany, other, broken]) {
      expect(run.stdout).toBe("");
      expect(run.stderr).not.toMatch(STACK_TRACE);
    }
  });

  it("refuses a bad --size or --origin as usage (exit 1), and a missing key file as unreadable (exit 2)", () => {
    const key = devKeyFile(tempDir());
    for (const args of [
      ["--size", "05"],
      ["--size", "-1"],
      ["--origin", "has space"],
      ["--origin", "a+b"],
    ]) {
      const run = aegis(["checkpoint", "--signing-key", key, ...args, GOLDEN]);
      expect(run.status, args.join(" ")).toBe(1);
      expect(run.stderr).toMatch(/^error: .*\nhelp: .*(aegis checkpoint --help|usage)/);
    }
    const missing = aegis(["checkpoint", "--signing-key", join(tempDir(), "nope.key"), GOLDEN]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^error: .*\nhelp: generate a key/);
  });
});
