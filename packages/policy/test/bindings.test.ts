import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { JsonObject } from "@aegis/format";
import { describe, expect, it } from "vitest";
import { decide, parseBindings, parsePolicySet } from "../src/index.js";
import { deriveAxes, describePolicyProblem } from "../src/internal.js";
import { tryParseBindings } from "../src/bindings.js";

const BINDINGS = parseBindings(`version: 1
tools:
  - tool: read_text_file
    capability: fs.read
    paths: [{ pointer: /params/arguments/path }]
  - tool: read_multiple_files
    capability: fs.read
    paths: [{ pointer: /params/arguments/paths }]
  - tool: move_file
    capability: fs.move
    paths:
      - { pointer: /params/arguments/source, access: write }
      - { pointer: /params/arguments/destination, access: write }
  - tool: "write_*"
    capability: fs.write
    paths: [{ pointer: /params/arguments/path, access: write }]
  - tool: write_special
    capability: special
  - tool: fetch
    capability: net.http
    net: { url: /params/arguments/url }
  - tool: connect
    net: { host: /params/arguments/host, port: /params/arguments/port }
`);

const request = (name: string, args: JsonObject): JsonObject => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });

describe("bindings (SPEC §17.4)", () => {
  it("derive the capability and the one path a call names, resolved", () => {
    expect(deriveAxes(BINDINGS, "read_text_file", request("read_text_file", { path: "/srv/data/../data/./a.txt" })).axes).toEqual({
      capability: "fs.read",
      fs: { path_raw: "/srv/data/../data/./a.txt", path_canonical: "/srv/data/a.txt" },
    });
  });

  it("take an exact tool name over a glob, and a glob for the rest", () => {
    expect(deriveAxes(BINDINGS, "write_special", request("write_special", { path: "/a" })).axes).toEqual({ capability: "special" });
    expect(deriveAxes(BINDINGS, "write_file", request("write_file", { path: "/a" })).axes).toEqual({
      capability: "fs.write",
      fs: { path_raw: "/a", path_canonical: "/a" },
    });
  });

  it("record no derived axes for a tool they do not bind", () => {
    expect(deriveAxes(BINDINGS, "echo", request("echo", { path: "/etc/passwd" }))).toEqual({ axes: {}, paths: [], unresolved: [] });
  });

  it("never guess: a relative path without exactly one root, a ~ path, several paths", () => {
    const relative = deriveAxes(BINDINGS, "read_text_file", request("read_text_file", { path: "notes.md" }));
    expect(relative.axes).toEqual({ capability: "fs.read" });
    expect(relative.unresolved).toEqual([{ code: "relative_path", pointer: "/params/arguments/path", roots: 0 }]);
    const two = parseBindings("version: 1\nroots: [/a, /b]\ntools:\n  - tool: t\n    paths: [{ pointer: /p }]\n");
    expect(deriveAxes(two, "t", { p: "notes.md" }).unresolved).toEqual([{ code: "relative_path", pointer: "/p", roots: 2 }]);
    expect(deriveAxes(BINDINGS, "read_text_file", request("read_text_file", { path: "~/x" })).unresolved).toEqual([
      { code: "home_path", pointer: "/params/arguments/path" },
    ]);
    const moved = deriveAxes(BINDINGS, "move_file", request("move_file", { source: "/a", destination: "/b" }));
    expect(moved.axes.fs).toBeUndefined();
    expect(moved.paths.map((p) => [p.resolved, p.access])).toEqual([
      ["/a", "write"],
      ["/b", "write"],
    ]);
    expect(deriveAxes(BINDINGS, "read_multiple_files", request("read_multiple_files", { paths: ["/one"] })).axes.fs).toEqual({
      path_raw: "/one",
      path_canonical: "/one",
    });
  });

  it("resolves a relative path against the one declared root, and against none once the client named roots of its own", () => {
    const rooted = parseBindings("version: 1\nroots: [/declared]\ntools:\n  - tool: t\n    paths: [{ pointer: /p }]\n");
    expect(deriveAxes(rooted, "t", { p: "x" }).axes.fs).toEqual({ path_raw: "x", path_canonical: "/declared/x" });
    const moved = deriveAxes(rooted, "t", { p: "x" }, { clientRoots: true });
    expect(moved.axes.fs).toBeUndefined();
    expect(moved.unresolved).toEqual([{ code: "client_roots", pointer: "/p" }]);
    // An absolute path needs no base.
    expect(deriveAxes(rooted, "t", { p: "/etc/x" }, { clientRoots: true }).axes.fs?.path_canonical).toBe("/etc/x");
  });

  it("derive host and port from a URL, with the scheme's default port, lowercased", () => {
    expect(deriveAxes(BINDINGS, "fetch", request("fetch", { url: "https://Example.COM/x" })).axes.net).toEqual({ host: "example.com", port: 443 });
    expect(deriveAxes(BINDINGS, "fetch", request("fetch", { url: "http://[::1]:8080/" })).axes.net).toEqual({ host: "::1", port: 8080 });
    expect(deriveAxes(BINDINGS, "fetch", request("fetch", { url: "gopher://h/" })).unresolved).toEqual([
      { code: "unknown_port", pointer: "/params/arguments/url" },
    ]);
    expect(deriveAxes(BINDINGS, "fetch", request("fetch", { url: "not a url" })).unresolved).toEqual([{ code: "bad_url", pointer: "/params/arguments/url" }]);
    expect(deriveAxes(BINDINGS, "connect", request("connect", { host: "DB.internal", port: 5432 })).axes.net).toEqual({ host: "db.internal", port: 5432 });
  });

  it("fail closed in decide: an fs rule cannot match a call whose path did not bind", () => {
    const set = parsePolicySet("version: 2\ndefault: allow\nrules:\n  - id: no-etc\n    action: deny\n    fs: { path_prefix: /etc/ }\n");
    const unbound = deriveAxes(BINDINGS, "read_text_file", request("read_text_file", { path: "relative" }));
    expect(decide(set, { tool_id: "read_text_file", axes: unbound.axes }).code).toBe("denied");
    const bound = deriveAxes(BINDINGS, "read_text_file", request("read_text_file", { path: "/etc/../srv/ok" }));
    expect(decide(set, { tool_id: "read_text_file", axes: bound.axes }).code).toBe("allowed");
  });

  it("report every problem of a file at once, with its path", () => {
    const result = tryParseBindings(
      "version: 2\nroots: [relative]\ntools:\n  - capability: 3\n    paths: [{ pointer: nope, access: sideways }]\n    net: { url: /u, host: /h }\n    extra: 1\n",
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map(describePolicyProblem)).toEqual([
      "version: unsupported bindings version 2 (supported: 1)",
      "roots[0]: a root is an absolute path",
      "tools[0].extra: unknown key",
      "tools[0].tool: required",
      "tools[0].capability: expected a string",
      'tools[0].paths[0].pointer: not a JSON Pointer (RFC 6901): "nope"',
      "tools[0].paths[0].access: expected read or write",
      "tools[0].net: give only one of url, host and port",
    ]);
  });

  it("the shipped bindings for server-filesystem parse, and bind every tool it lists", () => {
    const text = readFileSync(fileURLToPath(new URL("../../mcp/bindings/server-filesystem.yaml", import.meta.url)), "utf8");
    const shipped = parseBindings(text);
    const tools = [
      "read_file",
      "read_text_file",
      "read_media_file",
      "read_multiple_files",
      "write_file",
      "edit_file",
      "create_directory",
      "list_directory",
      "list_directory_with_sizes",
      "directory_tree",
      "move_file",
      "search_files",
      "get_file_info",
      "list_allowed_directories",
    ];
    for (const tool of tools)
      expect(
        shipped.tools.some((b) => b.tool === tool),
        tool,
      ).toBe(true);
  });
});
