import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Command, Option } from "clipanion";
import { AegisCommand } from "../command.js";
import { CliError, renderFault } from "../fault.js";
import type { ExitCode } from "../exit-code.js";
import { runVectors } from "@aegis/vectors/oracle";

/**
 * The vectors this aegis was released with: the `@aegis/vectors` package, a dependency of
 * the CLI, so they are found in a checkout and in an install of the packages alike.
 */
function bundledVectors(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve("@aegis/vectors/manifest.json"));
  } catch {
    // The one-file build (dist/aegis.mjs) carries no vectors, and may run where none are installed.
    throw new CliError({
      code: "bad_vectors",
      path: "@aegis/vectors",
      detail: "no @aegis/vectors package is installed beside this aegis; give the vectors' directory",
    });
  }
}

export class VectorsCommand extends AegisCommand {
  static override paths = [["vectors"]];

  static override usage = Command.Usage({
    description: "Run the conformance vectors against this implementation",
    details: `
      Reads \`manifest.json\` in the directory (by default the vectors this aegis was built with), runs every vector (canonical form, strict Ed25519, record verification, and the other kinds the manifest lists) and compares each answer with the expected one. Prints one line per failing vector with what differed, then \`N passed, N failed\`, which counts the manifest's vectors, each once. (conformance/python/run_vectors.py counts more: every case of \`external/\` too, and skips the kinds it does not implement; vectors/README.md says how the two counts relate.)

      Exit codes: 0 every vector passed, 1 any failed (or a usage error), 2 the directory holds no readable manifest.
    `,
    examples: [
      ["Run the bundled vectors", "aegis vectors"],
      ["Run a copy of the vectors, as JSON", "aegis vectors --json ./vectors"],
    ],
  });

  quiet = Option.Boolean("-q,--quiet", false, { description: "Print nothing on stdout: the exit code alone says it" });

  protected override get quietStdout(): boolean {
    return this.quiet;
  }

  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of text" });
  dir = Option.String({ name: "DIR", required: false });

  protected async run(): Promise<ExitCode> {
    const dir = this.dir ?? bundledVectors();
    // A vector whose input cannot be read fails in the words of the CLI's fault; the others still run.
    const run = await runVectors(dir, (fault) => renderFault(fault).error);
    if (!run.ok) throw new CliError(run.fault);
    const results = run.results;
    const failed = results.flatMap((r) => (r.passed ? [] : [r]));
    const passed = results.length - failed.length;
    if (this.json) {
      await this.out(`${JSON.stringify({ schema: "aegis.vectors-run/1", passed, failed: failed.length, failures: failed }, null, 2)}\n`);
    } else {
      for (const f of failed) await this.out(`FAIL ${f.id}\n  expected ${JSON.stringify(f.expected)}\n  actual   ${JSON.stringify(f.actual)}\n`);
      await this.out(`${passed} passed, ${failed.length} failed\n`);
    }
    return failed.length === 0 && results.length > 0 ? 0 : 1;
  }
}
