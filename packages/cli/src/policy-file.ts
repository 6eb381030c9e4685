import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describeIoError } from "@aegis/format/internal";
import { PolicyParseError, type PolicySet } from "@aegis/policy";
import { describePolicyProblem, loadPolicySet } from "@aegis/policy/internal";
import { CliError } from "./fault.js";

/** A Policy Set file, or the CLI fault that says why it is not one. */
export async function readPolicy(path: string, option: "--policy" | "--policies" = "--policy"): Promise<PolicySet> {
  try {
    return await loadPolicySet(path);
  } catch (error) {
    if (error instanceof PolicyParseError) throw new CliError({ code: "policy_parse", path, problems: error.problems.map(describePolicyProblem) });
    throw new CliError({ code: "unreadable_policy", path, detail: describeIoError(error), option });
  }
}

export async function readPolicyDir(dir: string): Promise<PolicySet[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /\.ya?ml$/.test(n)).sort();
  } catch (error) {
    throw new CliError({ code: "unreadable_policy", path: dir, detail: describeIoError(error), option: "--policies" });
  }
  if (names.length === 0) throw new CliError({ code: "no_policies", path: dir });
  const sets: PolicySet[] = [];
  for (const name of names) sets.push(await readPolicy(join(dir, name), "--policies"));
  return sets;
}
