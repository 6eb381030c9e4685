import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, STACK_TRACE, aegis, tempDir } from "./support.js";

const VECTORS = join(ROOT, "vectors");

interface ManifestFile {
  readonly vectors: readonly { id: string; kind: string; spec: string[]; flags: string[]; expected: { reason?: { code: string } | null } }[];
}
const committedCount = (): number => (JSON.parse(readFileSync(join(VECTORS, "manifest.json"), "utf8")) as ManifestFile).vectors.length;

describe("vectors/ (issue 6)", () => {
  it("SPEC.md lists the manifest's SHA-256", () => {
    const digest = createHash("sha256")
      .update(readFileSync(join(VECTORS, "manifest.json")))
      .digest("hex");
    expect(readFileSync(join(ROOT, "SPEC.md"), "utf8")).toContain(`\`${digest}\``);
  });

  it("aegis vectors passes every vector, as a child process", () => {
    const run = aegis(["vectors"]);
    expect(run.stdout).toMatch(new RegExp(`^${committedCount()} passed, 0 failed\\n$`));
    expect(run.status).toBe(0);
  });

  it("a vector whose expectation is wrong fails by name, exit 1; --json says the same", () => {
    const copy = join(tempDir(), "vectors");
    cpSync(VECTORS, copy, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(copy, "manifest.json"), "utf8")) as { vectors: { id: string; expected: Record<string, unknown> }[] };
    const target = manifest.vectors.find((v) => v.id === "chains/chain_broken");
    if (target === undefined) throw new Error("no chains/chain_broken vector");
    target.expected["verdict"] = "verified";
    writeFileSync(join(copy, "manifest.json"), JSON.stringify(manifest));
    const run = aegis(["vectors", copy]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("FAIL chains/chain_broken\n");
    expect(run.stdout).toMatch(new RegExp(`\\n${committedCount() - 1} passed, 1 failed\\n$`));
    const json = JSON.parse(aegis(["vectors", "--json", copy]).stdout) as { passed: number; failed: number; failures: { id: string }[] };
    expect(json).toMatchObject({ passed: committedCount() - 1, failed: 1, failures: [{ id: "chains/chain_broken" }] });
  });

  it("a directory without a manifest is exit 2 with error and help, no stack trace", () => {
    const run = aegis(["vectors", tempDir()]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^error: cannot run the vectors in .*manifest\.json: No such file or directory \(os error 2\)\nhelp: /);
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });
});

describe("vectors/manifest.json covers what issue 6 asks", () => {
  const manifest = JSON.parse(readFileSync(join(VECTORS, "manifest.json"), "utf8")) as ManifestFile;

  it("at least 150 vectors, at least two thirds of them negative", () => {
    expect(manifest.vectors.length).toBeGreaterThanOrEqual(150);
    const negative = manifest.vectors.filter((v) => v.flags[0] === "negative").length;
    expect(negative * 3).toBeGreaterThanOrEqual(manifest.vectors.length * 2);
    for (const v of manifest.vectors) expect(["positive", "negative"], v.id).toContain(v.flags[0]);
  });

  it("every verify reason code of SPEC §8.3 has a chain vector", () => {
    const spec = readFileSync(join(ROOT, "SPEC.md"), "utf8");
    const table = spec.slice(spec.indexOf("### 8.3 Reasons"), spec.indexOf("### 8.4"));
    const codes = new Set([...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1] ?? "").filter((c) => c !== ""));
    expect(codes.size).toBeGreaterThanOrEqual(14);
    const covered = new Set(manifest.vectors.filter((v) => v.kind === "chain").map((v) => v.expected.reason?.code));
    for (const code of codes) expect(covered.has(code), `no chain vector for ${code}`).toBe(true);
  });

  it("every SPEC section that states a MUST is referenced by at least one vector", () => {
    const spec = readFileSync(join(ROOT, "SPEC.md"), "utf8");
    const withMust = new Set<string>();
    let section = "";
    for (const line of spec.split("\n")) {
      const heading = /^#{2,3} (\d+(?:\.\d+)?)\.? /.exec(line);
      if (heading !== null) section = heading[1] ?? "";
      else if (section !== "" && /\bMUST\b/.test(line)) withMust.add(section);
    }
    expect(withMust.size).toBeGreaterThan(20);
    const referenced = new Set(manifest.vectors.flatMap((v) => v.spec));
    for (const s of withMust) expect(referenced.has(s), `no vector references SPEC §${s}`).toBe(true);
  });
});
