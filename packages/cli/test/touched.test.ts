import { describe, expect, it } from "vitest";
import type { DecisionAxes } from "@aegis/format";
import { axesName, describeFilter, parseHostFilter, parsePathFilter, type AxisFilter } from "../src/show/touched.js";

const path = (text: string): AxisFilter => {
  const parsed = parsePathFilter(text);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.filter;
};
const host = (text: string): AxisFilter => {
  const parsed = parseHostFilter(text);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.filter;
};
const fs = (path_canonical: string): DecisionAxes => ({ fs: { path_raw: "as the agent wrote it", path_canonical } });
const net = (h: string, port: number): DecisionAxes => ({ net: { host: h, port } });

describe("--path: a directory names every path under it, by whole components", () => {
  it.each([
    ["/etc", "/etc", true],
    ["/etc", "/etc/shadow", true],
    ["/etc", "/etc/ssh/sshd_config", true],
    ["/etc", "/etcx", false],
    ["/etc", "/etcx/shadow", false],
    ["/etc/shadow", "/etc", false],
    ["/etc/", "/etc/shadow", true],
    ["/srv/./data/../data//", "/srv/data/a.md", true],
    ["/", "/anything/at/all", true],
    ["/etc", "relative/etc/shadow", false],
    ["/etc", "/etc//shadow", true],
    ["/srv/data", "/srv/data-old/a.md", false],
  ])("%s against %s: %s", (filter, recorded, named) => {
    expect(axesName(fs(recorded), path(filter))).toBe(named);
  });

  it("the raw path the agent wrote is not what is matched: the canonical one is", () => {
    expect(axesName({ fs: { path_raw: "/etc/shadow", path_canonical: "/srv/data/shadow" } }, path("/etc"))).toBe(false);
  });

  it("a call without an fs axis is named by no path, / included", () => {
    expect(axesName({}, path("/"))).toBe(false);
    expect(axesName(net("example.com", 443), path("/"))).toBe(false);
  });

  it.each(["etc", "", "./etc", "~/x"])("refuses %j: not absolute", (text) => {
    expect(parsePathFilter(text)).toMatchObject({ ok: false });
  });

  it("says what it looks for", () => {
    expect(describeFilter(path("/srv/data/../etc/"))).toBe("path /srv/etc");
  });
});

describe("--host: the host, and the port when one is given", () => {
  it.each([
    ["example.com", "example.com", 443, true],
    ["example.com", "example.com", 8080, true],
    ["example.com:443", "example.com", 443, true],
    ["example.com:443", "example.com", 8443, false],
    ["EXAMPLE.com", "example.COM", 80, true],
    ["example.com", "api.example.com", 443, false],
    ["10.0.0.1:22", "10.0.0.1", 22, true],
    ["::1", "::1", 8080, true],
    ["[::1]:8080", "::1", 8080, true],
    ["[::1]:8080", "::1", 80, false],
    ["[::1]", "[::1]", 80, true],
    ["example.com:0", "example.com", 0, true],
  ])("%s against %s:%i: %s", (filter, h, port, named) => {
    expect(axesName(net(h, port), host(filter))).toBe(named);
  });

  it("a call without a net axis is named by no host", () => {
    expect(axesName(fs("/etc/hosts"), host("localhost"))).toBe(false);
  });

  it.each(["", ":443", "example.com:", "example.com:65536", "example.com:+1", "[::1", "[::1]x", "https://example.com/", "exa mple.com"])(
    "refuses %j",
    (text) => {
      expect(parseHostFilter(text)).toMatchObject({ ok: false });
    },
  );

  it("says what it looks for, IPv6 in brackets", () => {
    expect(describeFilter(host("[::1]:8080"))).toBe("host [::1]:8080");
    expect(describeFilter(host("Example.com"))).toBe("host example.com, any port");
  });
});
