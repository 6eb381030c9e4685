import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, ftruncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { GOLDEN, GOLDEN_PUBLIC_KEY, aegis } from "./support.js";

const work = mkdtempSync(join(tmpdir(), "aegis-report-"));

/** The parts of a written page a reader (the page's script) takes out of it. */
function pageParts(html: string): { data: Record<string, unknown>; record: Buffer | undefined; csp: string | undefined } {
  const data = /<script type="application\/json" id="aegis-data">([^<]*)<\/script>/.exec(html)?.[1];
  const record = /<script type="text\/plain" id="aegis-record" data-encoding="gzip" data-size="(\d+)">([^<]*)<\/script>/.exec(html);
  return {
    data: JSON.parse(data ?? "null") as Record<string, unknown>,
    record: record === null ? undefined : gunzipSync(Buffer.from(record[2] ?? "", "base64")),
    csp: /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1],
  };
}

describe("aegis report", () => {
  it("writes one page that carries the record's exact bytes, the verifier and what it computed, and fetches nothing", () => {
    const out = join(work, "golden.html");
    const run = aegis(["report", "--key", GOLDEN_PUBLIC_KEY, "--out", out, GOLDEN]);
    expect(run.stderr).toBe(
      "record: Verified (pinned to 77a2c2f5952039243c043b69e7e812a2deb69e3271adb3013b8f24d3b8ea40f6)\n" +
        // SPEC §13.4: the golden Session closed with call-golden-0's intent unanswered.
        "record: 1 call never finished before its Session ended (session 0: call-golden-0); `aegis show` lists it\n",
    );
    expect(run.stdout).toBe(`wrote ${out}: open it in a browser; it verifies the record again there\n`);
    expect(run.status).toBe(0);
    const html = readFileSync(out, "utf8");
    const parts = pageParts(html);
    expect(parts.record?.equals(readFileSync(GOLDEN))).toBe(true);
    expect(parts.data).toMatchObject({
      schema: "aegis.report/1",
      record_name: "golden-session.aarl",
      keys: [GOLDEN_PUBLIC_KEY],
      recheck: null,
      envelope: null,
    });
    expect(parts.csp).toMatch(/default-src 'none'/);
    // No external script, style, image or link: the page opens from disk with no network.
    expect(html).not.toMatch(/\s(src|href)="(https?:)?\/\//i);
    expect(html).toMatch(/<script type="text\/plain" id="aegis-worker">/);
    expect(existsSync(`${out}.tmp`)).toBe(false);
  });

  it("--blank writes the drop page: no record in it, the keys given filled in", () => {
    const out = join(work, "blank.html");
    const run = aegis(["report", "--blank", "--key", GOLDEN_PUBLIC_KEY, "--out", out]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/drop a record on it; nothing is uploaded/);
    const parts = pageParts(readFileSync(out, "utf8"));
    expect(parts.record).toBeUndefined();
    expect(parts.data).toMatchObject({ record_name: null, keys: [GOLDEN_PUBLIC_KEY] });
  });

  it.each([
    [["report", GOLDEN], /^error: report needs --out <FILE\.html>/],
    [["report", "--out", "x.html"], /^error: report needs a record \(or --blank/],
    [["report", "--blank", "--out", "x.html", GOLDEN], /^error: --blank writes a page with no record/],
    [["report", "--blank", "--policy", "p.yaml", "--out", "x.html"], /^error: --envelope, --policy and --checkpoint need a record/],
    [["report", "--key", "77a2c2f5", "--out", "x.html", GOLDEN], /^error: --key needs a 64-hex public key/],
  ])("refuses %j as a usage error, with help and exit code 1, writing nothing", (args, message) => {
    const run = aegis(args, { cwd: work });
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/\nhelp: /);
    expect(run.status).toBe(1);
    expect(existsSync(join(work, "x.html"))).toBe(false);
  });

  it("refuses a record too large for a page, before reading it, with exit code 2", () => {
    const big = join(work, "big.aarl");
    const fd = openSync(big, "w");
    ftruncateSync(fd, 256 * 1024 * 1024 + 1);
    closeSync(fd);
    const run = aegis(["report", "--out", join(work, "big.html"), big]);
    expect(run.stderr).toMatch(
      /^error: .*big\.aarl is 268435457 bytes: a report page carries at most 268435456 bytes of record\nhelp: verify it with `aegis verify`/,
    );
    expect(run.status).toBe(2);
    expect(existsSync(join(work, "big.html"))).toBe(false);
  });

  it("says which output it cannot write, and exits 2", () => {
    const run = aegis(["report", "--out", join(work, "no-such-dir", "page.html"), GOLDEN]);
    expect(run.stderr).toMatch(/^record: Verified \(unpinned\)\nrecord: 1 call never finished .*\nerror: cannot use .*no-such-dir\/page\.html: /);
    expect(run.status).toBe(2);
  });

  it("a record that cannot be read is exit code 2, and no page", () => {
    const run = aegis(["report", "--out", join(work, "none.html"), join(work, "missing.aarl")]);
    expect(run.stderr).toMatch(/^error: .*missing\.aarl/);
    expect(run.status).toBe(2);
    expect(existsSync(join(work, "none.html"))).toBe(false);
  });

  it("--help explains the page and shows examples", () => {
    const run = aegis(["report", "--help"]);
    expect(run.stdout).toMatch(/re-?verif|verifies the record again, in the browser/);
    expect(run.stdout).toMatch(/aegis report --blank --out verify\.html/);
    expect(run.status).toBe(0);
  });
});
