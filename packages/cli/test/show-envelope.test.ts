import { describe, expect, it } from "vitest";
import { aegis, vector } from "./support.js";

const redacted = (...args: string[]) =>
  aegis(["show", ...args, "--envelope", vector("envelope/store_redacted/store"), vector("envelope/store_redacted/session.aarl")]);

describe("aegis show --envelope: a call's bytes beside what the record says of them", () => {
  it("shows the request and response text under each call, and why bytes are absent", () => {
    const run = redacted("--call", "c1");
    expect(run.stdout).toContain('    request bytes   "{\\"path\\":\\"/w/a.md\\",\\"n\\":\\"req-c1\\"}"\n    response bytes  "resp-c1: # a"');
    expect(run.status).toBe(0);
    expect(redacted("--call", "c2").stdout).toContain("    request bytes   redacted at 2026-01-02T03:04:05.000Z: secret token in arguments\n");
    const altered = aegis([
      "show",
      "--call",
      "c2",
      "--envelope",
      vector("envelope/store_value_altered/store"),
      vector("envelope/store_value_altered/session.aarl"),
    ]);
    expect(altered.stdout).toMatch(/request bytes {3}altered: the stored bytes hash to [0-9a-f]{64}, not to the digest the record names\n/);
    const none = aegis([
      "show",
      "--call",
      "c3",
      "--envelope",
      vector("envelope/pack_some_calls/envelope.pack"),
      vector("envelope/pack_some_calls/session.aarl"),
    ]);
    expect(none.stdout).toContain("    request bytes   missing: the Envelope holds no bytes for this digest\n");
  });

  it("--json: each call's envelope member, the bytes whole", () => {
    const doc = JSON.parse(redacted("--json").stdout) as { entries: { kind: string; call_id?: string; envelope?: unknown }[] };
    const calls = doc.entries.filter((e) => e.kind === "call");
    expect(calls.find((c) => c.call_id === "c1")?.envelope).toEqual({
      request: { status: "present", size: 31, text: '{"path":"/w/a.md","n":"req-c1"}' },
      response: { status: "present", size: 12, text: "resp-c1: # a" },
    });
    expect(calls.find((c) => c.call_id === "c2")?.envelope).toMatchObject({ request: { status: "redacted", reason: "secret token in arguments" } });
    // Without --envelope, no envelope member: the document is as before.
    const plain = JSON.parse(aegis(["show", "--json", vector("envelope/store_redacted/session.aarl")]).stdout) as { entries: object[] };
    expect(plain.entries.every((e) => !("envelope" in e))).toBe(true);
  });

  it("an Envelope that cannot be opened: exit 2, nothing shown", () => {
    const run = aegis(["show", "--envelope", "/nonexistent/store", vector("envelope/store_redacted/session.aarl")]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^error: /);
  });
});
