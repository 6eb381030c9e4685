import { describe, expect, it } from "vitest";
import { aegis, vector } from "./support.js";

// The base Session with the aegis-ts `time` member on every Line (SPEC §13.7), 7 ms apart.
const TIMED = vector("chains/verified_time_member.aarl");

describe("aegis show with Lines that carry a time", () => {
  it("says when each Session opened and each call began, and how long until its outcome", () => {
    const run = aegis(["show", TIMED]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("  opened      2026-12-03T12:00:00.000Z\n");
    expect(run.stdout).toContain(
      "  call call-0  fs.read\n    at          intent session 0 seq 1, outcome session 0 seq 2\n    time        2026-12-03T12:00:00.007Z, outcome 7 ms later\n",
    );
  });

  it("--json gives each call's intent and outcome times", () => {
    const run = aegis(["show", "--json", TIMED]);
    const doc = JSON.parse(run.stdout) as { entries: { kind: string; intent?: { time?: string }; outcome?: { record: { time?: string } } }[] };
    const call = doc.entries.find((e) => e.kind === "call");
    expect(call?.intent?.time).toBe("2026-12-03T12:00:00.007Z");
    expect(call?.outcome?.record.time).toBe("2026-12-03T12:00:00.014Z");
  });

  it("a record without times shows none", () => {
    const run = aegis(["show", vector("chains/verified_unpinned.aarl")]);
    expect(run.status).toBe(0);
    expect(run.stdout).not.toMatch(/\n\s+(opened|time)\s/);
  });
});
