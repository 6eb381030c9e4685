/**
 * The one process of wrap's that runs inside a confined server's network namespace (SPEC
 * §17.11), and only when `--allow-net` grants something: the namespace has nothing but its
 * own loopback, so each granted destination is given there by this helper, which passes every
 * connection, named, through a Unix socket to wrap outside, and wrap connects to the
 * destination only when it was granted. It then starts the server's own sandbox (the inner
 * bubblewrap, which shares this network namespace and nothing else) and ends with its status.
 *
 * It runs as `node -e` of {@link netHelperMain}'s source, so it must stand alone: it names
 * nothing outside its own body, and loads Node's modules itself (the one file's bundler would
 * turn an `import()` here into a chunk of its own, which `node -e` cannot find).
 */
export interface NetHelperConfig {
  /** wrap's end: a Unix socket path. */
  readonly gate: string;
  /** Loopback destinations to listen on here, as given: connections to them go through the gate. */
  readonly listen: readonly { readonly host: string; readonly port: number; readonly text: string }[];
  /** Whether to serve an HTTP proxy (CONNECT, and absolute-form requests) for the other destinations. */
  readonly proxy: boolean;
  /** The inner sandbox: the program and its arguments, the server's after them. */
  readonly inner: readonly string[];
}

/** The helper's source, to run as `node -e <source> <config as JSON>`. */
export function netHelperSource(): string {
  return `(${netHelperMain.toString()})(JSON.parse(process.argv[1]))`;
}

/** The helper itself. Every name it uses is its own (see above). */
function netHelperMain(config: NetHelperConfig): void {
  // `node -e` puts require on the global object; read there, no bundler rewrites it.
  const load = (globalThis as unknown as { readonly require: (id: string) => unknown }).require;
  const net = load("node:net") as typeof import("node:net");
  const { spawn } = load("node:child_process") as typeof import("node:child_process");
  const { constants } = load("node:os") as typeof import("node:os");
  const MAX_HEAD = 16 * 1024;

  /** Ask wrap for `target`; resolves with the tunnel once wrap has connected, or undefined. */
  const ask = (target: string): Promise<import("node:net").Socket | undefined> =>
    new Promise((resolve) => {
      const tunnel = net.connect(config.gate);
      let answer = "";
      const done = (ok: boolean): void => {
        tunnel.removeAllListeners("data");
        if (!ok) tunnel.destroy();
        resolve(ok ? tunnel : undefined);
      };
      tunnel.on("error", () => done(false));
      tunnel.on("data", (chunk: Buffer) => {
        answer += chunk.toString("latin1");
        const end = answer.indexOf("\n");
        if (end === -1) return answer.length > 256 ? done(false) : undefined;
        const rest = Buffer.from(answer.slice(end + 1), "latin1");
        const ok = answer.slice(0, end) === "ok";
        done(ok);
        if (ok && rest.length > 0) tunnel.unshift(rest);
      });
      tunnel.write(`${target}\n`);
    });
  const join = (a: import("node:net").Socket, b: import("node:net").Socket): void => {
    a.pipe(b);
    b.pipe(a);
    a.on("error", () => b.destroy());
    b.on("error", () => a.destroy());
    a.on("close", () => b.destroy());
    b.on("close", () => a.destroy());
  };

  const listening: Promise<unknown>[] = [];
  for (const grant of config.listen) {
    const server = net.createServer((client) => {
      client.pause();
      client.on("error", () => undefined);
      void ask(grant.text).then((tunnel) => {
        if (tunnel === undefined) return void client.destroy();
        join(client, tunnel);
        client.resume();
      });
    });
    listening.push(new Promise((resolve) => server.listen(grant.port, grant.host === "localhost" ? "127.0.0.1" : grant.host, () => resolve(undefined))));
  }

  let proxyPort = 0;
  if (config.proxy) {
    const proxy = net.createServer((client) => {
      let head = Buffer.alloc(0);
      client.on("error", () => undefined);
      const onData = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end === -1) return void (head.length > MAX_HEAD && client.destroy());
        client.off("data", onData);
        client.pause();
        const line = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
        const connect = /^CONNECT (\S+:\d+) HTTP\/1\.[01]$/i.exec(line);
        const absolute = /^[A-Z]+ http:\/\/([^/\s]+)\S* HTTP\/1\.[01]$/i.exec(line);
        const authority = connect?.[1] ?? absolute?.[1];
        const target = authority === undefined ? undefined : /:\d+$/.test(authority) ? authority : `${authority}:80`;
        if (target === undefined) return void client.end("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        void ask(target.toLowerCase()).then((tunnel) => {
          if (tunnel === undefined) return void client.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
          if (connect !== undefined && connect !== null) {
            client.write("HTTP/1.1 200 Connection established\r\n\r\n");
            const rest = head.subarray(end + 4);
            if (rest.length > 0) tunnel.write(rest);
          } else tunnel.write(head);
          join(client, tunnel);
          client.resume();
        });
      };
      client.on("data", onData);
    });
    listening.push(
      new Promise((resolve) =>
        proxy.listen(0, "127.0.0.1", () => {
          const address = proxy.address();
          proxyPort = typeof address === "object" && address !== null ? address.port : 0;
          resolve(undefined);
        }),
      ),
    );
  }
  void Promise.all(listening).then(() => startInner());

  // The server's own sandbox: its status goes to wrap on fd 3, as the outer sandbox's would.
  function startInner(): void {
    const [program, ...args] = config.inner;
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    const env = config.proxy
      ? { ...process.env, HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl, ALL_PROXY: proxyUrl, http_proxy: proxyUrl, https_proxy: proxyUrl, all_proxy: proxyUrl }
      : process.env;
    const child = spawn(program ?? "bwrap", args, { stdio: ["inherit", "inherit", "inherit", "inherit"], env });
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => undefined);
    child.on("error", () => process.exit(127));
    // As a shell reports it: the sandbox reports a signal's end as 128 + n too (SPEC §17.11).
    child.on("exit", (code, signal) => process.exit(signal === null ? (code ?? 1) : 128 + (constants.signals[signal] ?? 15)));
  }
}
