import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { EVERYTHING_SERVER } from "./support.js";
import { WrapProcess } from "./wrap-process.js";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const HTTP_SPY = fileURLToPath(new URL("./fixtures/http-spy-server.mjs", import.meta.url));

/** A port no process listens on now, on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `@modelcontextprotocol/server-everything` in its Streamable HTTP mode, at `url`. */
export async function everythingHttp(): Promise<{ readonly url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let said = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${said}`)), 30_000);
    child.stderr.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", () => reject(new Error(`server-everything exited: ${said}`)));
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * `aegis wrap --listen 127.0.0.1:0 ...` as a process, once it listens: its URL, read off its
 * stderr, and the bearer token a client presents: the one given in `env`, or the one wrap
 * keeps in the file it names there (SPEC §17.10).
 */
export async function listening(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  shell?: string,
): Promise<{ readonly wrap: WrapProcess; readonly url: string; readonly token: string; readonly authorization: { readonly authorization: string } }> {
  const wrap = new WrapProcess(args, shell === undefined ? { env } : { env, shell });
  await wrap.stderrHas("listening on http://");
  const said = /listening on (http:\/\/\S+\/mcp) \(bearer token (?:given|in (\S+))\)/.exec(wrap.stderr);
  const url = said?.[1];
  if (said === null || url === undefined) throw new Error(`no URL in ${wrap.stderr}`);
  const file = said[2];
  const variable = args[args.indexOf("--listen-token-env") + 1];
  const token = file !== undefined ? readFileSync(file, "utf8").trim() : (env[variable ?? ""] ?? "");
  return { wrap, url, token, authorization: { authorization: `Bearer ${token}` } };
}

/** The HTTP spy (fixtures/http-spy-server.mjs): every body it was sent, and the headers asked about. */
export async function httpSpy(log: string, headers: readonly string[] = []): Promise<{ readonly url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [HTTP_SPY], {
    env: { ...process.env, SPY_LOG: log, SPY_HEADERS: headers.join(",") },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let said = "";
  const port = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      const found = /spy listening on (\d+)/.exec(said)?.[1];
      if (found !== undefined) resolve(found);
    });
    child.once("exit", () => reject(new Error(`the spy exited: ${said}`)));
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

const HOSTILE = fileURLToPath(new URL("./fixtures/hostile-http-server.mjs", import.meta.url));

/** A hostile HTTP server (fixtures/hostile-http-server.mjs) doing `mode`; its URL and log. */
export async function hostile(
  w: { readonly dir: string },
  mode: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ readonly url: string; readonly log: string; stop(): void }> {
  const log = join(w.dir, "hostile.log");
  const child = spawn(process.execPath, [HOSTILE], { env: { ...process.env, HOSTILE: mode, HOSTILE_LOG: log, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let said = "";
  const port = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      const found = /hostile listening on (\d+)/.exec(said)?.[1];
      if (found !== undefined) resolve(found);
    });
    child.once("exit", () => reject(new Error(`the hostile server exited: ${said}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, log, stop: () => void child.kill("SIGKILL") };
}
