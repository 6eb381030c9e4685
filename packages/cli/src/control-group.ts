import { describeIoError } from "@aegis/format/internal";
import { readInputFile } from "@aegis/format/durable";
import { CliError } from "./fault.js";

/** Where group names are looked up (SPEC §17.5): Node cannot ask the system's NSS. */
const GROUP_FILE = "/etc/group";
/** Read whole, so bounded (SPEC §18); a real /etc/group is a few KiB. */
const MAX_GROUP_FILE_BYTES = 16 * 1024 * 1024;
/** The largest group id Linux gives (2^32 - 2; 2^32 - 1 is "no change" to chown). */
const MAX_GID = 4_294_967_294;

/**
 * The group id `--control-group` names (SPEC §17.5): a decimal GID as it is, or a name
 * looked up in /etc/group. A name that is not there is refused: the socket is never opened
 * to a group other than the one meant.
 *
 * @throws CliError `control_group` for an unknown name or an unreadable /etc/group.
 */
export async function resolveControlGroup(value: string, file = GROUP_FILE): Promise<number> {
  if (/^(0|[1-9][0-9]*)$/.test(value)) {
    const gid = Number(value);
    if (gid > MAX_GID) throw new CliError({ code: "control_group", group: value, detail: `a group id is at most ${MAX_GID}` });
    return gid;
  }
  let text: string;
  try {
    text = (await readInputFile(file, MAX_GROUP_FILE_BYTES)).toString("utf8");
  } catch (error) {
    throw new CliError({ code: "control_group", group: value, detail: `cannot read ${file}: ${describeIoError(error)}` });
  }
  // group(5): name:password:GID:members, one group a line.
  for (const line of text.split("\n")) {
    const [name, , gid] = line.split(":");
    if (name === value && gid !== undefined && /^(0|[1-9][0-9]*)$/.test(gid) && Number(gid) <= MAX_GID) return Number(gid);
  }
  throw new CliError({ code: "control_group", group: value, detail: `no group of that name in ${file}` });
}
