import { describe, expect, it } from "vitest";
import { type Verification } from "../src/index.js";
import { readVectorJson, vectorPath } from "./support/vectors.js";
import { verifyChainFile } from "../src/verify/verify-record.js";

/**
 * The Rust reference's own verifier fixtures, with the results its tests assert
 * (vectors/external/rust-aegis/SOURCE.md). Values the reference tests do not assert but
 * its code implies are under `inferred`, and are checked too.
 */
interface Expected {
  readonly file: string;
  readonly trust: readonly string[] | null;
  readonly verdict: "verified" | "tampered" | "indeterminate";
  readonly reason: string | null;
  readonly fields: Record<string, unknown>;
  readonly key_ids?: readonly string[];
  readonly inferred?: { readonly coverage?: unknown; readonly fields?: Record<string, unknown> };
}

const expectations = readVectorJson<Expected[]>("external/rust-aegis/expected.json");
const DEV_KEY_ID = "77a2c2f5952039243c043b69e7e812a2deb69e3271adb3013b8f24d3b8ea40f6";

/** The reference names a few fields differently; translate its names to ours. */
function ours(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (k === "in_flight_calls") out["in_flight"] = v;
    else if (k === "source" && typeof v === "object" && v !== null && "kind" in v) {
      const { kind, ...rest } = v as { kind: string };
      out["source"] = { code: kind, ...rest };
    } else if (k === "detail_prefix") continue;
    else out[k] = v;
  }
  return out;
}

function reasonOf(v: Verification): Record<string, unknown> {
  return v.verdict.status === "verified" ? {} : { ...v.verdict.reason };
}

describe("Rust reference fixtures (vectors/external/rust-aegis)", () => {
  it.each(expectations.map((e) => ({ ...e, name: `${e.file}${e.trust === null ? "" : " (pinned)"}` })))("$name: $verdict $reason", async (e) => {
    const v = await verifyChainFile(vectorPath(`external/rust-aegis/${e.file}`), e.trust === null ? {} : { trust: e.trust });
    expect(v.verdict.status).toBe(e.verdict);
    if (e.reason !== null) expect(reasonOf(v)).toMatchObject({ code: e.reason, ...ours(e.fields), ...ours(e.inferred?.fields ?? {}) });
    if (e.inferred !== undefined && "coverage" in e.inferred) {
      expect(v.coverage ?? null).toEqual(e.inferred.coverage ?? null);
    }
    const detailPrefix = e.inferred?.fields?.["detail_prefix"];
    if (typeof detailPrefix === "string") expect(String(reasonOf(v)["detail"])).toMatch(new RegExp(`^${detailPrefix}`));
    if (e.verdict !== "indeterminate" || e.reason !== "empty_chain") expect(v.key_ids).toEqual([DEV_KEY_ID]);
  });

  it("covers every fixture file the reference ships", () => {
    const files = new Set(expectations.map((e) => e.file));
    expect(files.size).toBe(14);
  });
});
