import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, KeyId, PolicySetHash, RequestDigest, type EnvelopeAccess, type JsonObject } from "../src/index.js";
import { readTypedLine, parseJson } from "../src/internal.js";
import { DEV, readLines, tempDir } from "./support/chains.js";
import { verifyChainFile } from "../src/verify/verify-record.js";

const ACCESS: EnvelopeAccess = {
  digest: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
  reason: "INC-1: what was sent",
  os_user: "operator",
  reader_key_id: KeyId.of(DEV.publicKey),
};
const START = {
  call_id: "call-1",
  tool_id: "aegis.envelope.get",
  request_digest: RequestDigest.of(Buffer.from("the access")),
  policy_set_hash: PolicySetHash.of("p"),
  envelope_access: ACCESS,
};

describe("envelope_access (SPEC §14.11, an aegis-ts member)", () => {
  it("is written on the intent and repeated on the outcome, also one the writer writes itself on close; it reads back typed", async () => {
    const path = join(tempDir(), "access.aarl");
    const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
    await writer.beginCall(START);
    await writer.endCall("call-1", {
      policy: { status: "allowed" },
      capability: { status: "denied", reason: "n/a" },
      execution: { status: "success" },
      decision_axes: {},
    });
    await writer.beginCall({ ...START, call_id: "call-2" });
    await writer.close();
    const lines = readLines(path);
    expect(lines.map((l) => [l["line_type"], l["call_id"], l["envelope_access"]])).toEqual([
      ["open", undefined, undefined],
      ["intent", "call-1", ACCESS],
      ["outcome", "call-1", ACCESS],
      ["intent", "call-2", ACCESS],
      ["outcome", "call-2", ACCESS],
      ["close", undefined, undefined],
    ]);
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
    for (const row of readFileSync(path, "utf8").split("\n").slice(1, 5)) {
      const typed = readTypedLine(parseJson(row) as JsonObject);
      expect(typed.ok && (typed.value.line_type === "intent" || typed.value.line_type === "outcome") && typed.value.line.envelope_access).toEqual(ACCESS);
    }
  });

  it("a typed read names each member that does not fit", () => {
    const intent = {
      schema_version: 2,
      line_type: "intent",
      seq: 1,
      prev_hash: "0".repeat(64),
      call_id: "c",
      tool_id: "aegis.envelope.get",
      request_digest: "1".repeat(64),
      envelope_access: { digest: "ABC", reason: 7, reader_key_id: "2".repeat(64) },
    };
    expect(readTypedLine(intent)).toEqual({
      ok: false,
      problems: [
        "$.envelope_access.digest: expected 64 lowercase hex",
        "$.envelope_access.reason: expected a string",
        "$.envelope_access.os_user: expected a string (missing)",
      ],
    });
  });
});
