import ts from "typescript";

const HOST: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: () => ts.sys.getCurrentDirectory(),
  getNewLine: () => "\n",
};

/**
 * `tsc -p config`, in this process, with the type check of declaration files kept to those
 * `checked` selects. A user's `skipLibCheck: false` also checks the MCP SDK's, zod's and
 * Node's declarations: 93% of the 7 s each build took (`tsc --generateTrace`, 2026-12-06),
 * and none of them ours to answer for. Our packages' declarations and the examples are checked
 * in full; options, syntax and global errors are reported for every file.
 */
export function compile(config: string, checked: (file: string) => boolean): string[] {
  const problems: ts.Diagnostic[] = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(config, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => problems.push(diagnostic),
  });
  if (parsed === undefined) return problems.map((d) => ts.formatDiagnostic(d, HOST));
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, configFileParsingDiagnostics: parsed.errors });
  problems.push(
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(),
  );
  for (const file of program.getSourceFiles()) if (checked(file.fileName)) problems.push(...program.getSemanticDiagnostics(file));
  // File by file: emitting the whole program first type-checks every file in it, skipLibCheck
  // or not, which would undo the above.
  if (parsed.options.noEmit !== true)
    for (const root of parsed.fileNames) {
      const file = program.getSourceFile(root);
      if (file !== undefined) problems.push(...program.emit(file).diagnostics);
    }
  return problems.map((d) => ts.formatDiagnostic(d, HOST));
}
