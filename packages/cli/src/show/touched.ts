import type { DecisionAxes } from "@aegis/format/browser";

/**
 * What `aegis show --path` and `--host` look for in a call's decision axes, and the report
 * page's filter of the same name: one module, so that the page and the command cannot
 * disagree on which calls touched a thing. No Node API: the page bundles it.
 *
 * Only the axes are read (SPEC §5.3): `fs.path_canonical`, the path the server acted on,
 * and `net.host` and `net.port`. `fs.path_raw` is what the agent wrote, which names the
 * thing only by way of a base and links the writer resolved (SPEC §17.4); a call whose
 * path or endpoint was not resolved to exactly one has no axis, and is named by no filter.
 */
export type AxisFilter =
  /** `path`: absolute, with `.`, `..`, repeated and trailing slashes taken out. */
  | { readonly code: "path"; readonly path: string }
  /** `host`: lowercased, an IPv6 address without brackets; `port` absent: any port. */
  | { readonly code: "host"; readonly host: string; readonly port?: number };

export type AxisFilterParse = { readonly ok: true; readonly filter: AxisFilter } | { readonly ok: false; readonly detail: string };

/**
 * `--path <PATH>`: an absolute path, made lexical (`/srv/./data/../data/` is `/srv/data`).
 * No link is followed: the record names paths as the writer's host resolved them, and the
 * host reading the record may not be that host.
 */
export function parsePathFilter(text: string): AxisFilterParse {
  if (!text.startsWith("/")) return { ok: false, detail: `a path must be absolute, as decision axes record it (got ${JSON.stringify(text)})` };
  if (text.includes("\0")) return { ok: false, detail: "a path holds no NUL character" };
  const parts: string[] = [];
  for (const part of text.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return { ok: true, filter: { code: "path", path: `/${parts.join("/")}` } };
}

const PORT = /^[0-9]{1,5}$/;

/**
 * `--host <HOST[:PORT]>`: `example.com`, `example.com:443`, `10.0.0.1:8080`, `::1` or
 * `[::1]:8080` (an IPv6 address with a port is written in brackets, as in a URL).
 */
export function parseHostFilter(text: string): AxisFilterParse {
  let host = text;
  let port: string | undefined;
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end < 0) return { ok: false, detail: `an IPv6 address in brackets needs its closing bracket (got ${JSON.stringify(text)})` };
    host = text.slice(1, end);
    const rest = text.slice(end + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) return { ok: false, detail: `after the brackets only :PORT may follow (got ${JSON.stringify(text)})` };
      port = rest.slice(1);
    }
  } else {
    const colon = text.indexOf(":");
    // One colon: host:port. More: an IPv6 address, which takes a port only in brackets.
    if (colon >= 0 && colon === text.lastIndexOf(":")) {
      host = text.slice(0, colon);
      port = text.slice(colon + 1);
    }
  }
  if (host === "") return { ok: false, detail: `no host given (got ${JSON.stringify(text)})` };
  if (/[\s/]/.test(host)) return { ok: false, detail: `a host holds no white space or slash: give the host, not a URL (got ${JSON.stringify(text)})` };
  if (port === undefined) return { ok: true, filter: { code: "host", host: host.toLowerCase() } };
  const n = Number(port);
  if (!PORT.test(port) || n > 65535) return { ok: false, detail: `a port is a decimal integer from 0 to 65535 (got ${JSON.stringify(port)})` };
  return { ok: true, filter: { code: "host", host: host.toLowerCase(), port: n } };
}

/** Whether `axes` name what `filter` looks for: a path at or under it, by whole components; the host (and port). */
export function axesName(axes: DecisionAxes, filter: AxisFilter): boolean {
  if (filter.code === "path") {
    const recorded = axes.fs?.path_canonical;
    return recorded !== undefined && isAtOrUnder(recorded, filter.path);
  }
  const net = axes.net;
  if (net === undefined) return false;
  // A host from a `host` pointer is recorded as found (SPEC §17.4): names are compared without case.
  let host = net.host.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return host === filter.host && (filter.port === undefined || net.port === filter.port);
}

/**
 * `/etc` holds `/etc` and `/etc/shadow`, not `/etcx`: the recorded path's components, empty
 * ones dropped (so `//` and a trailing `/` change nothing), begin with the filter's.
 */
function isAtOrUnder(recorded: string, path: string): boolean {
  if (path === "/") return recorded.startsWith("/");
  if (!recorded.startsWith("/")) return false;
  const want = path.slice(1).split("/");
  let at = 0;
  for (const part of recorded.split("/")) {
    if (part === "") continue;
    if (at === want.length) return true;
    if (part !== want[at]) return false;
    at++;
  }
  return at === want.length;
}

/** `path /etc` or `host example.com:443` (`host example.com, any port`): what a listing is of. */
export function describeFilter(filter: AxisFilter): string {
  if (filter.code === "path") return `path ${filter.path}`;
  const host = filter.host.includes(":") ? `[${filter.host}]` : filter.host;
  return filter.port === undefined ? `host ${host}, any port` : `host ${host}:${filter.port}`;
}
