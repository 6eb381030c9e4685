import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { type Notice } from "../src/index.js";
import { describeNotice } from "../src/notice.js";
import { McpRecorder } from "../src/internal.js";
import { Relay } from "../src/relay.js";
import { openWriter, tempDir } from "./support.js";

// A stream's error is said and taken as that stream's end, never dropped (ADR 0029).
describe("the relay's streams fail", () => {
  for (const stream of ["client_in", "client_out", "server_in", "server_out"] as const) {
    it(`${stream}: the operator is told, and the Session still ends`, async () => {
      const writer = await openWriter(join(tempDir(), "r.aarl"));
      const ends = { clientIn: new PassThrough(), clientOut: new PassThrough(), serverIn: new PassThrough(), serverOut: new PassThrough() };
      const notices: Notice[] = [];
      let told = (): void => undefined;
      const toldOnce = new Promise<void>((resolve) => (told = resolve));
      const relay = new Relay(ends, {
        recorder: new McpRecorder({ writer }),
        maxFrameBytes: 1 << 20,
        graceMs: 50,
        stopGraceMs: 50,
        onNotice: (notice) => {
          notices.push(notice);
          if (notice.code === "stream_failed") told();
        },
      });
      const ended = relay.run();
      const which = { client_in: ends.clientIn, client_out: ends.clientOut, server_in: ends.serverIn, server_out: ends.serverOut }[stream];
      which.destroy(new Error("the pipe broke"));
      await toldOnce;
      const failed = notices.find((n) => n.code === "stream_failed");
      expect(failed).toEqual({ code: "stream_failed", stream, detail: "the pipe broke" });
      expect(failed === undefined ? "" : describeNotice(failed)).toContain("the pipe broke");
      ends.serverOut.end();
      relay.stop("SIGTERM");
      await ended;
      await writer.close();
    });
  }
});
