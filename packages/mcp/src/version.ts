/**
 * This package's version, which names the instrumentation scope of the spans it exports. A
 * constant, not a read of package.json, so that the one-file build (dist/aegis.mjs), which has
 * no package.json beside it, exports too; a test holds it to packages/mcp/package.json.
 */
export const MCP_VERSION = "0.1.0";
