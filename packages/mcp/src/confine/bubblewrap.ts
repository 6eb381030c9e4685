import { execFile } from "node:child_process";
import { lstat, readlink } from "node:fs/promises";
import { findProgram } from "../program.js";
import { EXEC_SUPPORT, type Grants, type PathGrant } from "./grants.js";

/**
 * bubblewrap (`bwrap`, Debian's `bubblewrap`, Flatpak's sandbox) as wrap's confinement
 * (SPEC §17.11, ADR 0034): the server's whole process tree in namespaces of its own (user,
 * mount, pid, ipc, uts, cgroup and, unless a destination is granted, network), its root an
 * empty tmpfs holding only what was granted, every capability dropped.
 */
export interface Bubblewrap {
  readonly path: string;
  /** As `bwrap --version` says it: `0.8.0`. */
  readonly version: string;
}

/** `bwrap` on the server's PATH, and its version; undefined when there is none. */
export async function findBubblewrap(env: NodeJS.ProcessEnv | undefined): Promise<Bubblewrap | undefined> {
  const path = await findProgram("bwrap", env, undefined);
  if (path === undefined) return undefined;
  const said = await run(path, ["--version"]);
  const version = /bubblewrap (\S+)/.exec(said.stdout)?.[1];
  return version === undefined ? undefined : { path, version };
}

/**
 * Whether bubblewrap can make its namespaces here (a kernel or an AppArmor policy may forbid
 * unprivileged user namespaces): undefined when it can, else what it said. `nested` also
 * tries a sandbox inside a sandbox of its own network, as `--allow-net` needs.
 */
export async function bubblewrapFails(bwrap: Bubblewrap, nested: boolean): Promise<string | undefined> {
  const node = process.execPath;
  const inner = [bwrap.path, ...SANDBOX, "--ro-bind", "/", "/", node, "-e", ""];
  const args = nested
    ? [
        ...outerArgs(),
        node,
        "-e",
        `require("node:child_process").execFileSync(${JSON.stringify(inner[0])}, ${JSON.stringify(inner.slice(1))}, { stdio: "inherit" })`,
      ]
    : [...SANDBOX, "--unshare-net", "--ro-bind", "/", "/", node, "-e", ""];
  const said = await run(bwrap.path, args);
  return said.code === 0 ? undefined : said.stderr.trim().split("\n").at(-1) || `bwrap exited ${said.code}`;
}

/** Every sandbox's namespaces, network aside; its end with wrap's; no capability. */
const SANDBOX = [
  "--unshare-user-try",
  "--unshare-ipc",
  "--unshare-pid",
  "--unshare-uts",
  "--unshare-cgroup-try",
  "--die-with-parent",
  "--cap-drop",
  "ALL",
] as const;
/**
 * The helper's sandbox (`--allow-net`): the host's files, a network of its own, in a user
 * namespace of its own, where the capabilities it keeps act on its own namespaces only; the
 * server's sandbox inside it drops them all.
 */
const OUTER = ["--unshare-user", "--unshare-net", "--die-with-parent"] as const;

/**
 * The arguments before the server's command: the sandbox, its mounts, and its status on fd 3
 * (`--json-status-fd`: the server's exit code, and whether it started at all). `network`:
 * whether the sandbox has a network namespace of its own (false under the helper, whose
 * namespace it shares).
 */
export async function sandboxArgs(grants: Grants, network: boolean): Promise<string[]> {
  return [...SANDBOX, ...(network ? ["--unshare-net"] : []), "--json-status-fd", "3", ...(await mountArgs(grants)), "--"];
}

/** The helper's sandbox: the host's files as they are, and a network namespace of its own. */
export function outerArgs(): string[] {
  return [...OUTER, "--dev-bind", "/", "/", "--"];
}

/**
 * The mounts: what exec support names, then each grant, parents before what is under them.
 * A granted path that is a symbolic link is bound where it leads, and the link made beside
 * it, unless a grant already holds where the link is (it is seen through that grant then).
 */
async function mountArgs(grants: Grants): Promise<string[]> {
  const args: string[] = [];
  if (grants.execSupport) {
    for (const path of EXEC_SUPPORT) {
      const info = await lstat(path).catch(() => undefined);
      if (info === undefined) continue;
      if (path === "/dev") args.push("--dev", "/dev");
      else if (path === "/proc") args.push("--proc", "/proc");
      else if (info.isSymbolicLink()) args.push("--symlink", await readlink(path), path);
      else args.push("--ro-bind", path, path);
    }
  }
  const all: (PathGrant & { readonly flag: string })[] = [
    ...grants.read.map((g) => ({ ...g, flag: "--ro-bind" })),
    ...grants.write.map((g) => ({ ...g, flag: "--bind" })),
  ].sort((a, b) => a.real.split("/").length - b.real.split("/").length);
  const held = [...(grants.execSupport ? EXEC_SUPPORT : []), ...all.map((g) => g.real)];
  for (const g of all) args.push(g.flag, g.real, g.real);
  for (const g of all) if (g.path !== g.real && !held.some((h) => g.path.startsWith(`${h}/`))) args.push("--symlink", g.real, g.path);
  return args;
}

function run(program: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(program, [...args], { timeout: 10_000, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}
