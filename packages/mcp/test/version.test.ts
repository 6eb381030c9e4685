import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MCP_VERSION } from "../src/version.js";

describe("MCP_VERSION", () => {
  it("is the version packages/mcp/package.json declares", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(MCP_VERSION).toBe(manifest.version);
  });
});
