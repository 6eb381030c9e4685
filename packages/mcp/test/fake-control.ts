import { mkdtempSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Something that is not a wrap listening on a real Unix socket where `aegis approve` looks
 * for one (SPEC §17.5): it reads the request line, then answers as `answer` says. It records
 * the requests it read and, per connection, when the client went away.
 */
export interface FakeControl {
  readonly path: string;
  /** The request lines read, in order. */
  readonly requests: string[];
  /** Settles when the client has closed its connection (the first one). */
  readonly clientGone: Promise<void>;
  close(): Promise<void>;
}

/** An answer: a text to send and end with, or a function that drives the socket itself. */
export type FakeAnswer = string | Buffer | ((socket: Socket) => void);

export async function fakeControl(answer: FakeAnswer): Promise<FakeControl> {
  const path = join(mkdtempSync(join(tmpdir(), "aegis-ctl-")), "control");
  const requests: string[] = [];
  const open = new Set<Socket>();
  let gone: () => void = () => undefined;
  const clientGone = new Promise<void>((resolve) => (gone = resolve));
  const server: Server = createServer((socket) => {
    open.add(socket);
    socket.on("error", () => socket.destroy());
    socket.once("close", () => {
      open.delete(socket);
      gone();
    });
    let text = "";
    const onData = (chunk: Buffer): void => {
      text += chunk.toString("utf8");
      const newline = text.indexOf("\n");
      if (newline === -1) return;
      socket.off("data", onData);
      requests.push(text.slice(0, newline));
      if (typeof answer === "function") answer(socket);
      else socket.end(answer);
    };
    socket.on("data", onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  return {
    path,
    requests,
    clientGone,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Write `chunk` for as long as the peer reads, and stop when it goes away: an endless answer. */
export function endless(chunk: Buffer): (socket: Socket) => void {
  return (socket) => {
    const pump = (): void => {
      while (!socket.destroyed && socket.write(chunk));
      if (!socket.destroyed) socket.once("drain", pump);
    };
    pump();
  };
}
