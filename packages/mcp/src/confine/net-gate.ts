import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NetGrant } from "./grants.js";

/**
 * wrap's end of a confined server's network (SPEC §17.11): a Unix socket in a private
 * directory, where the helper inside the sandbox names each destination it is asked for
 * (`HOST:PORT\n`). A destination granted is connected to, answered `ok\n`, and the bytes
 * pass both ways; any other is answered `no\n` and closed. The helper cannot reach anything
 * else: its namespace has no network of its own.
 */
export class NetGate {
  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    readonly path: string,
    private readonly sockets: Set<Socket>,
  ) {}

  static async open(grants: readonly NetGrant[]): Promise<NetGate> {
    const allowed = new Map(grants.map((g) => [g.text, g]));
    // mkdtemp makes the directory 0700: only wrap's user reaches the socket in it.
    const dir = await mkdtemp(join(tmpdir(), "aegis-net-"));
    const path = join(dir, "gate.sock");
    const sockets = new Set<Socket>();
    const server = createServer((inside) => {
      sockets.add(inside);
      inside.on("close", () => sockets.delete(inside));
      inside.on("error", () => undefined);
      let asked = "";
      const onData = (chunk: Buffer): void => {
        asked += chunk.toString("latin1");
        const end = asked.indexOf("\n");
        if (end === -1) return void (asked.length > 512 && inside.destroy());
        inside.off("data", onData);
        inside.pause();
        const grant = allowed.get(asked.slice(0, end));
        if (grant === undefined) return void inside.end("no\n");
        const outside = connect({ host: grant.host === "localhost" ? "127.0.0.1" : grant.host, port: grant.port, timeout: 10_000 });
        sockets.add(outside);
        outside.on("close", () => sockets.delete(outside));
        outside.once("timeout", () => outside.destroy());
        outside.once("error", () => inside.end("no\n"));
        outside.once("connect", () => {
          outside.setTimeout(0);
          inside.write("ok\n");
          const rest = Buffer.from(asked.slice(end + 1), "latin1");
          if (rest.length > 0) outside.write(rest);
          inside.pipe(outside);
          outside.pipe(inside);
          inside.on("close", () => outside.destroy());
          outside.on("close", () => inside.destroy());
          inside.resume();
        });
      };
      inside.on("data", onData);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    return new NetGate(server, dir, path, sockets);
  }

  /** Stop: no connection in or out is left, and the socket's directory is gone. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }
}
