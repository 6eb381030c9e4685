import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveControlGroup } from "../src/control-group.js";
import { CliError } from "../src/fault.js";
import { tempDir } from "./support.js";

describe("wrap --control-group <NAME|GID> (SPEC §17.5)", () => {
  const file = join(tempDir(), "group");
  writeFileSync(file, "root:x:0:\napprovers:x:1234:alice,bob\n# not a group\nbroken:x:\nlate:x:99:\n");

  it("takes a name from the group file, and a decimal GID as it is", async () => {
    expect(await resolveControlGroup("approvers", file)).toBe(1234);
    expect(await resolveControlGroup("late", file)).toBe(99);
    expect(await resolveControlGroup("4321", file)).toBe(4321);
    expect(await resolveControlGroup("0", file)).toBe(0);
  });

  it("refuses a name the file does not hold, one without a GID, and a file it cannot read", async () => {
    const fault = async (group: string, path = file): Promise<unknown> => {
      const error = await resolveControlGroup(group, path).catch((e: unknown) => e);
      return error instanceof CliError ? error.fault : error;
    };
    expect(await fault("alice")).toEqual({ code: "control_group", group: "alice", detail: `no group of that name in ${file}` });
    expect(await fault("broken")).toEqual({ code: "control_group", group: "broken", detail: `no group of that name in ${file}` });
    expect(await fault("01234")).toEqual({ code: "control_group", group: "01234", detail: `no group of that name in ${file}` });
    expect(await fault("approvers", join(file, "missing"))).toMatchObject({
      code: "control_group",
      group: "approvers",
      detail: expect.stringMatching(/^cannot read /),
    });
  });
});
