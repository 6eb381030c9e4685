import { BaseSequencer, type TestSpecification } from "vitest/node";
import base from "./vitest.config.js";

/**
 * The tests `npm run mutation` runs against each mutant of the verifier core (ADR 0026):
 * the format package's tests of what the core decides, every chain, canonical and Ed25519
 * vector among them, cheapest first, since Stryker stops a mutant's run at its first failing
 * test. The split walk's tests read pieces on this thread too (`packages/format/test/support/tuned.ts`,
 * `here`), since a mutant never reaches the row threads, which run the built `dist/`. Left
 * out are the tests of the writer and of files and processes, which judge nothing of the
 * core that these do not and would take most of the time, and the test of the browser's
 * Ed25519 back end, which mocks a module these load once: the files share their modules
 * (`isolate: false`), which makes a mutant's run several times faster.
 */
const FILES = [
  "digest",
  "line-read",
  "signature-checker",
  "verdict-texts",
  "reference-vectors",
  "spec",
  "golden",
  "rows",
  "walk",
  "signing",
  "verdict-reasons",
  "spec-rules",
  "vector-files",
  "chain-vectors",
  "canonical",
  "json",
  "ed25519-prechecks",
  "ed25519",
  "ed25519-standard-rule",
  "external-ed25519",
  "piece-answer",
  "piece-cutter",
  "piece-rows",
  "deferred-checks",
  "row-verifier",
  "unfinished-calls",
  "linked-members",
  "browser-entry",
  "split-walk-budget",
  "split-walk",
  "parallel-verify",
].map((name) => `packages/format/test/${name}.test.ts`);

function rank(spec: TestSpecification): number {
  const at = FILES.findIndex((file) => spec.moduleId.endsWith(file));
  return at === -1 ? FILES.length : at;
}

class CheapestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return Promise.resolve([...files].sort((a, b) => rank(a) - rank(b)));
  }
}

export default {
  ...base,
  test: {
    ...base.test,
    // One run of these files, not the suite's two projects.
    projects: undefined,
    include: FILES,
    // Not the check that the CLI's one file is newer than the compiled modules (ADR 0045):
    // none of these tests starts the CLI, and Stryker's copy of the checkout gives every file
    // the time it was copied.
    globalSetup: ["test/support/scratch.ts"],
    sequence: { sequencer: CheapestFirst },
    isolate: false,
  },
};
