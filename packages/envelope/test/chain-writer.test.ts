import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, PolicySetHash, RequestDigest, ResponseDigest, type EnvelopeSink, verifyRecord } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { EnvelopeStore, openEnvelope } from "../src/index.js";
import { tempDir, text } from "./support/stores.js";

describe("the Chain writer with a real Envelope (SPEC §9, §13.2)", () => {
  it("[M14.1] keeps the verbatim request and response bytes under the digests the Lines carry, and the Chain still verifies after a redaction", async () => {
    const dir = tempDir();
    const store = await EnvelopeStore.open(join(dir, "envelope"));
    // The store is what the writer asks of an Envelope, no adapter needed.
    const sink: EnvelopeSink = store;
    const path = join(dir, "calls.aarl");
    const writer = await RecordWriter.open(path, { key: insecureDevKey(), allowInsecureDevKey: true, envelope: sink });
    // Deliberately not canonical JSON: the bytes are kept as they came.
    const request = text('{ "method": "tools/call",  "params": {"name":"fs.read", "token":"sk-123"} }');
    const response = text('{"result": {"content": [ ]}}\n');
    await writer.beginCall({ call_id: "c1", tool_id: "fs.read", policy_set_hash: PolicySetHash.of("p"), request });
    await writer.endCall("c1", {
      policy: { status: "allowed" },
      capability: { status: "denied", reason: "not evaluated" },
      execution: { status: "success" },
      decision_axes: {},
      response,
    });
    await writer.close();

    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const outcome = lines.find((l) => l["line_type"] === "outcome") ?? {};
    const requestDigest = RequestDigest.parse(String(outcome["request_digest"]));
    const responseDigest = ResponseDigest.parse(String(outcome["response_digest"]));
    expect(requestDigest).toBe(RequestDigest.of(request));
    expect(await store.get(requestDigest)).toEqual({ code: "present", bytes: Buffer.from(request) });
    expect(await store.get(responseDigest)).toEqual({ code: "present", bytes: Buffer.from(response) });

    expect(await store.redact(requestDigest, "holds a token")).toMatchObject({ code: "redacted" });
    await store.close();
    expect((await verifyRecord({ path })).verdict.status).toBe("verified");
    const reader = await openEnvelope(join(dir, "envelope"));
    expect(await reader.get(requestDigest)).toMatchObject({ code: "redacted", reason: "holds a token" });
    expect(await reader.get(responseDigest)).toMatchObject({ code: "present" });
    await reader.close();
  });
});
