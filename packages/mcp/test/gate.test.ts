import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { parseBindings, parsePolicySet } from "@aegis/policy";
import { describe, expect, it } from "vitest";
import { Gate, McpRecorder } from "../src/internal.js";
import { Relay } from "../src/relay.js";
import { resolveOnDisk } from "../src/gate.js";
import { call, openWriter, tempDir } from "./support.js";

describe("bound paths resolved on the disk (SPEC §17.4)", () => {
  const root = tempDir();
  mkdirSync(join(root, "data", "sub"), { recursive: true });
  mkdirSync(join(root, "secret"));
  writeFileSync(join(root, "secret", "key"), "k");
  symlinkSync(join(root, "secret"), join(root, "data", "link"));
  writeFileSync(join(root, "data", "caf\u00e9.txt"), "nfc");

  it("follows a symbolic link to where it leads, and a missing tail as named", () => {
    expect(resolveOnDisk(join(root, "data", "link", "key"))).toBe(join(root, "secret", "key"));
    expect(resolveOnDisk(`${root}/data/./sub//new/file.txt`)).toBe(join(root, "data", "sub", "new", "file.txt"));
    expect(resolveOnDisk(`${root}/data/sub/../sub/x`)).toBe(join(root, "data", "sub", "x"));
  });

  it("takes no side when a .. follows a link: the kernel and a server that removes .. first open two files", () => {
    expect(resolveOnDisk(`${root}/data/link/../data/x`)).toBeUndefined();
  });

  it("takes no side when the name is another Unicode spelling of a file that exists", () => {
    expect(resolveOnDisk(join(root, "data", "cafe\u0301.txt"))).toBeUndefined();
    expect(resolveOnDisk(join(root, "data", "caf\u00e9.txt"))).toBe(join(root, "data", "caf\u00e9.txt"));
  });

  it("fails closed in the gate: an fs rule cannot match an ambiguous path, so a deny-by-default set refuses it", () => {
    const gate = new Gate({
      policy: parsePolicySet(`version: 2\ndefault: deny\nrules:\n  - { id: data, action: allow, fs: { path_prefix: ${root}/data/ } }\n`),
      bindings: parseBindings("version: 1\ntools:\n  - tool: read\n    paths: [{ pointer: /params/arguments/path }]\n"),
    });
    const decide = (path: string) => gate.decide("read", JSON.parse(call(1, "read", { path }).toString()) as never, call(1, "read", { path })).decision.code;
    expect(decide(`${root}/data/sub/a.txt`)).toBe("allowed");
    expect(decide(`${root}/data/link/key`)).toBe("denied");
    expect(decide(`${root}/data/link/../data/sub/a.txt`)).toBe("denied");
    expect(decide(join(root, "data", "cafe\u0301.txt"))).toBe("denied");
  });
});

describe("the relay's memory (SPEC §17.1)", () => {
  it("stops reading the client while the server does not read its input, and reads on when it does", async () => {
    const dir = tempDir();
    const writer = await openWriter(join(dir, "r.aarl"));
    const clientIn = new PassThrough();
    // A server that takes nothing until `release()`: its write callbacks are held.
    const held: (() => void)[] = [];
    let reading = false;
    let newlines = 0;
    let allRead = (): void => undefined;
    const serverIn = new Writable({
      highWaterMark: 1024,
      write: (chunk: Buffer, _encoding, callback) => {
        for (const byte of chunk) if (byte === 0x0a) newlines++;
        if (newlines === offered) allRead();
        if (reading) callback();
        else held.push(() => callback());
      },
    });
    const serverOut = new PassThrough();
    const relay = new Relay(
      { clientIn, clientOut: new PassThrough(), serverIn, serverOut },
      { recorder: new McpRecorder({ writer }), maxFrameBytes: 1 << 20, graceMs: 50, stopGraceMs: 50, onNotice: () => undefined },
    );
    const ended = relay.run();
    const note = (i: number) => `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/x", params: { i, pad: "p".repeat(500) } })}\n`;
    let offered = 0;
    while (!clientIn.isPaused() && offered < 10_000) {
      clientIn.write(note(offered++));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(clientIn.isPaused()).toBe(true);
    // Paused, and stays so: what the client offers now waits on its side, not in the relay.
    // The relay reads on only at an event (the server's drain); none comes, so a turn of the
    // event loop, after every callback the writes queued, is the whole of what could happen.
    for (let i = 0; i < 100; i++) clientIn.write(note(offered++));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(clientIn.isPaused()).toBe(true);
    expect(clientIn.readableLength + clientIn.writableLength).toBeGreaterThanOrEqual(100 * 500);
    // The server reads: the relay resumes the client, and every frame offered reaches it.
    const everything = new Promise<void>((resolve) => (allRead = resolve));
    const resumed = once(clientIn, "resume");
    reading = true;
    for (const release of held.splice(0)) release();
    await resumed;
    await everything;
    expect(newlines).toBe(offered);
    serverOut.end();
    await ended;
    await writer.close();
  });
});
