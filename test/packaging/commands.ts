/**
 * The commands that make what a user installs, in one place: the packaging test runs them,
 * and the release workflow (.github/workflows/release.yml) must run the same, which
 * release.test.ts checks. A package added here is packed, tested and published alike.
 */
const PUBLISHED = ["packages/format", "packages/envelope", "packages/policy", "packages/proof", "packages/mcp", "vectors", "packages/cli"];

/** `--workspace <dir>` for each published package, in order. */
export const WORKSPACES: readonly string[] = PUBLISHED.flatMap((w) => ["--workspace", w]);

/** `npm pack` of every published package into `destination`, as `npm pack --json` answers. */
export function packArgs(destination: string): string[] {
  return ["pack", "--json", "--pack-destination", destination, ...WORKSPACES];
}

/** The one file (ADR 0023): `npm run bundle` builds, then runs this script, which writes dist/aegis.mjs. */
export const BUNDLE_SCRIPT = "scripts/bundle.mjs";
export const BUNDLE_NPM_SCRIPT = `npm run build && node ${BUNDLE_SCRIPT}`;
