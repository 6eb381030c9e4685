import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { BIN, MIRROR, linesOf, outcomes, verdictOf } from "./support.js";
import { workspace } from "./wrap-process.js";

describe("the SDK client's close() in front of a server that outlives its stdin", () => {
  it("[M17.6] ends with a Verified record: wrap takes the SIGTERM that close() sends after 2 s, and closes the Session", async () => {
    const w = await workspace();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "wrap", "--audit", w.audit, "--signing-key", w.key, "--", process.execPath, MIRROR],
      stderr: "pipe",
    });
    // The mirror says on its stderr, which wrap passes through, each frame it received: the
    // event that the call crossed wrap (so its intent is recorded) before close() is called.
    const reached = new Promise<void>((resolve, reject) => {
      let said = "";
      const stderr = transport.stderr;
      if (stderr === null) return reject(new Error("the transport has no stderr"));
      stderr.on("data", (chunk: Buffer) => {
        said += chunk.toString("utf8");
        if (said.includes("mirror: received tools/call")) resolve();
      });
      stderr.on("end", () => reject(new Error(`wrap's stderr ended before the call reached the mirror: ${said}`)));
    });
    const client = new Client({ name: "closer", version: "1.0.0" });
    await client.connect(transport);
    // The mirror stays up (silent) after this, whatever its stdin does.
    await client.notification({ method: "test/hang" });
    const pending = client.callTool({ name: "never", arguments: {} }, undefined, { timeout: 60_000 }).catch((e: unknown) => e);
    await reached;
    await client.close();
    await pending;
    // close() waited 2 s and sent SIGTERM; the close Line says wrap finished the Session
    // before the SIGKILL that follows 2 s later.
    const lines = linesOf(w.audit);
    expect(lines.at(-1)?.line_type).toBe("close");
    expect(outcomes(w.audit)[0]).toMatchObject({
      tool_id: "never",
      execution: { status: "host_denied", reason: "aegis wrap received SIGTERM before the child responded" },
    });
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 60_000);
});
