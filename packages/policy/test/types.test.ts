import { PolicySetHash, RequestDigest, type EnvelopeLookup, type EnvelopeRead } from "@aegis/format";
import { describe, expect, it } from "vitest";
import { decide, type PolicySet } from "../src/index.js";
import { policy } from "./support/policies.js";

describe("types that keep mistakes from compiling", () => {
  it("a PolicySet comes from the parser only: a hand-built one does not type-check", () => {
    const handBuilt = { version: 1, default: "allow", rules: [], hash: PolicySetHash.of("not its projection") } as const;
    // @ts-expect-error the brand is required: the hash of a hand-built set was never checked
    const set: PolicySet = handBuilt;
    void set;
    expect(policy("default: deny").default).toBe("deny");
  });

  it("an Envelope lookup is the shape @aegis/envelope's `get` has, declared here", async () => {
    const stored = new TextEncoder().encode("{}");
    const get = async <D extends string>(
      digest: D,
    ): Promise<
      | { readonly code: "present"; readonly bytes: Uint8Array }
      | { readonly code: "missing" }
      | { readonly code: "digest_mismatch"; readonly expected: D; readonly found: string }
      | { readonly code: "redacted"; readonly redactedAt: string; readonly reason: string }
    > => ((digest as string) === RequestDigest.of(stored) ? { code: "present", bytes: stored } : { code: "missing" });
    const lookup: EnvelopeLookup = get;
    const read: EnvelopeRead = await lookup(RequestDigest.of(stored));
    expect(read.code).toBe("present");
  });

  it("a decision's outcome members are the Chain's types", () => {
    const d = decide(policy("default: deny"), { tool_id: "t" });
    // @ts-expect-error a PolicySetHash is not a RequestDigest
    const wrong: RequestDigest = d.policy_set_hash;
    void wrong;
    expect(d.policy_set_hash).toHaveLength(64);
  });
});
