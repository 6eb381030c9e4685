import { unmatched } from "@aegis/format/internal";
import type { CheckpointFinding } from "@aegis/proof";
import { match } from "ts-pattern";

/** One line per checkpoint, after the verdict: what was found of it. */
export function describeFinding(f: CheckpointFinding): string {
  const what = match(f)
    .with({ code: "matches" }, () => "matches the record's first lines")
    .with({ code: "truncated" }, () => "covers more lines than the record holds that verify")
    .with({ code: "unsigned" }, () => "is not signed by the key of the session holding its last line")
    .with({ code: "mismatch" }, () => "states another root than the record's first lines have")
    .with({ code: "not_reached" }, () => "not checked: the record breaks before")
    .exhaustive(unmatched);
  const cosigned = f.cosigned === undefined ? "" : `; cosigned by ${f.cosigned.length === 0 ? "no witness given" : f.cosigned.join(", ")}`;
  return `checkpoint ${f.label} (${f.origin}, ${f.size} lines): ${what}${cosigned}`;
}
