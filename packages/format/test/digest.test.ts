import { describe, expect, it } from "vitest";
import {
  KeyId,
  LineHash,
  PolicySetHash,
  PrevHash,
  RequestDigest,
  ResponseDigest,
  ToolSpecDigest,
  type LineHash as LineHashT,
  type PolicySetHash as PolicySetHashT,
  type PrevHash as PrevHashT,
  type RequestDigest as RequestDigestT,
  type ResponseDigest as ResponseDigestT,
  type ToolSpecDigest as ToolSpecDigestT,
} from "../src/index.js";
import { DigestParseError, chainsTo } from "../src/wire/digest.js";

const hex64 = "ab".repeat(32);

describe("digests (SPEC §2)", () => {
  it("[M2.1] parse exactly 64 lowercase hex and nothing else: uppercase is refused, not normalized", () => {
    expect(LineHash.parse(hex64)).toBe(hex64);
    expect(() => LineHash.parse(hex64.toUpperCase())).toThrow("not a lowercase hex character at position 0");
    expect(() => PrevHash.parse("ab")).toThrow("expected 64 hex characters, got 2");
    expect(() => KeyId.parse(`${hex64.slice(1)}g`)).toThrow(DigestParseError);
  });

  it("[M9.1] a digest is made by hashing the bytes exactly as given, never from a caller's claim", () => {
    expect(RequestDigest.of(new TextEncoder().encode("{}"))).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    expect(PolicySetHash.of("golden-fixture-policy-set")).toBe("89a056813bdf93f95c1881a78793b1a86f5b6bab829c1ba9d20bb4add2aae921");
    expect(ResponseDigest.of(new Uint8Array())).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("a Line chains to the hash of the Line before it", () => {
    const tail = LineHash.of("{}");
    expect(chainsTo(PrevHash.after(tail), tail)).toBe(true);
    expect(chainsTo(PrevHash.GENESIS, tail)).toBe(false);
  });

  it("transposing two digest kinds is a compile error", () => {
    const line: LineHashT = LineHash.of("x");
    const policy: PolicySetHashT = PolicySetHash.of("x");
    const request: RequestDigestT = RequestDigest.of(new Uint8Array());
    // @ts-expect-error a PolicySetHash is not a PrevHash
    const wrongPrev: PrevHashT = policy;
    // @ts-expect-error a LineHash is not a PrevHash until it is chained with PrevHash.after
    const notChained: PrevHashT = line;
    // @ts-expect-error a RequestDigest is not a PolicySetHash
    const wrongPolicy: PolicySetHashT = request;
    // @ts-expect-error a raw string is not a digest of any kind
    const raw: LineHashT = hex64;
    // @ts-expect-error chainsTo takes (PrevHash, LineHash), in that order
    chainsTo(line, PrevHash.GENESIS);
    const spec: ToolSpecDigestT = ToolSpecDigest.of("{}");
    // @ts-expect-error a ToolSpecDigest is not a ResponseDigest: a pinned definition is not a tool's answer
    const wrongResponse: ResponseDigestT = spec;
    expect([wrongPrev, notChained, wrongPolicy, raw, wrongResponse]).toHaveLength(5);
  });
});
