import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/**
 * Whether the server's program can be found as spawn will look for it: a name with a slash
 * is a path (from `cwd`), a bare name is searched on the PATH of the server's environment.
 * wrap asks before it opens the record, so that a mistyped server appends no empty Session.
 * A program found here may still fail to start; spawn's own error then says so.
 */
export async function programExists(command: string, env: NodeJS.ProcessEnv | undefined, cwd: string | undefined): Promise<boolean> {
  return (await findProgram(command, env, cwd)) !== undefined;
}

/** The path spawn would start for `command`, found as {@link programExists} looks; undefined when none. */
export async function findProgram(command: string, env: NodeJS.ProcessEnv | undefined, cwd: string | undefined): Promise<string | undefined> {
  const here = cwd ?? process.cwd();
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : resolve(here, command);
    return (await executable(path)) ? path : undefined;
  }
  const path = (env ?? process.env)["PATH"] ?? "";
  for (const dir of path.split(delimiter)) {
    // An empty PATH entry is the current directory, as execvp reads it.
    const candidate = join(dir === "" ? here : resolve(here, dir), command);
    if (await executable(candidate)) return candidate;
  }
  return undefined;
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
