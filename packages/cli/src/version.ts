/**
 * This aegis's version (`aegis --version`, and a report's provenance): the version in
 * packages/cli/package.json, which a test holds it to. A constant, not a read of that file,
 * so that the one-file build (dist/aegis.mjs), which has no package.json beside it, says it too.
 */
export const VERSION = "0.1.0";
