import { ToolSpecDigest } from "@aegis/format";
import { canonicalJson } from "./canonical-json.js";
import { isRecord, type Json, type JsonRecord } from "./message.js";

/**
 * Tool-spec pinning (SPEC §17.6). A server can change what a tool says it does between two
 * calls (its description, its schema): the "rug pull". Each tool's definition, as the
 * server listed it, is hashed in its canonical form, and every outcome names the digest of
 * the definition in force when the call was made.
 */

export interface PinnedTool {
  readonly name: string;
  readonly digest: ToolSpecDigest;
  /** The canonical bytes the digest is over: what an Envelope keeps. */
  readonly canonical: Buffer;
}

/** What one listing changed. */
export interface ListingChange {
  readonly pinned: readonly PinnedTool[];
  /** Tools listed before under another definition. */
  readonly changed: readonly { readonly name: string; readonly from: ToolSpecDigest; readonly to: ToolSpecDigest }[];
  /** Entries of `tools` that are no definition (no string `name`, or no canonical form). */
  readonly unreadable: number;
}

/** The digest of one tool definition: SHA-256 of its RFC 8785 form. */
function pinTool(definition: JsonRecord): PinnedTool | undefined {
  const name = definition["name"];
  if (typeof name !== "string") return undefined;
  const text = canonicalJson(definition);
  if (text === undefined) return undefined;
  const canonical = Buffer.from(text, "utf8");
  return { name, digest: ToolSpecDigest.of(canonical), canonical };
}

/** Every tool of a `tools/list` result (`{tools: [...]}`), pinned. */
export function pinListing(result: Json | undefined): { readonly pinned: PinnedTool[]; readonly unreadable: number } | undefined {
  if (!isRecord(result)) return undefined;
  const tools = result["tools"];
  if (!Array.isArray(tools)) return undefined;
  const pinned: PinnedTool[] = [];
  let unreadable = 0;
  for (const tool of tools as readonly Json[]) {
    const pin = isRecord(tool) ? pinTool(tool) : undefined;
    if (pin === undefined) unreadable++;
    else pinned.push(pin);
  }
  return { pinned, unreadable };
}

/** Where tool definitions are kept (an Envelope store has this method). */
export interface ToolSpecSink {
  putToolSpec(bytes: Uint8Array): Promise<ToolSpecDigest>;
}

/** The definitions in force, by tool name (the latest listing's), and their keeping. */
export class ToolSpecs {
  private readonly current = new Map<string, PinnedTool>();
  /** Definitions being kept, and those kept: an outcome names one only once it is durable. */
  private readonly puts = new Map<ToolSpecDigest, Promise<unknown>>();
  private readonly kept = new Set<ToolSpecDigest>();

  /** Keep a definition's bytes, once; the put, when one was started. */
  keep(pin: PinnedTool, sink: ToolSpecSink): Promise<ToolSpecDigest> | undefined {
    if (this.puts.has(pin.digest) || this.kept.has(pin.digest)) return undefined;
    const put = sink.putToolSpec(pin.canonical);
    this.puts.set(
      pin.digest,
      put.then(
        () => {
          this.puts.delete(pin.digest);
          this.kept.add(pin.digest);
        },
        () => void this.puts.delete(pin.digest),
      ),
    );
    return put;
  }

  /** What an outcome naming `digest` waits for: its definition's put, while it is under way. */
  keeping(digest: ToolSpecDigest): Promise<unknown> | undefined {
    return this.puts.get(digest);
  }

  /**
   * Take a listing's answer. A first page (a request without a cursor) replaces what was
   * known; a later page adds to it.
   */
  ingest(result: Json | undefined, continued: boolean): ListingChange | undefined {
    const listing = pinListing(result);
    if (listing === undefined) return undefined;
    const before = new Map(this.current);
    if (!continued) this.current.clear();
    const changed: { name: string; from: ToolSpecDigest; to: ToolSpecDigest }[] = [];
    for (const pin of listing.pinned) {
      const was = before.get(pin.name);
      if (was !== undefined && was.digest !== pin.digest) changed.push({ name: pin.name, from: was.digest, to: pin.digest });
      this.current.set(pin.name, pin);
    }
    return { pinned: listing.pinned, changed, unreadable: listing.unreadable };
  }

  digestOf(name: string): ToolSpecDigest | undefined {
    return this.current.get(name)?.digest;
  }
}
