import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { LINKED_MEMBERS } from "../src/verify/piece-answer.js";
import { ChainWalk, type WalkOptions } from "../src/verify/walk.js";
import { isJsonObject, type JsonObject, type JsonValue } from "../src/wire/json.js";
import { readRow, type ReadRow } from "../src/wire/row-read.js";
import { RowSplitter, type Row } from "../src/wire/row-splitter.js";
import { readLines, reseal, tempDir, writeSession, type Line } from "./support/chains.js";
import { manifestEntries } from "./support/manifest.js";
import { vectorPath } from "./support/vectors.js";

/**
 * The split walks (ADR 0027, ADR 0028) send the walk only the members of a Line named in
 * LINKED_MEMBERS; without `onLine` the walk is given a value holding those and nothing else.
 * A member the walk reads that the list lacks would be `undefined` there, and the split
 * walk could answer otherwise than the sequential one. So this test ties the list to what
 * walk.ts really reads: it runs the sequential walk itself (walk.ts, `step`) over every
 * record under vectors/ and over property-generated records, each row's value wrapped in a
 * Proxy that records the name of every member the walk looks at (`value[name]`, `name in
 * value`, a descriptor, or a listing of every key), and wants each name in LINKED_MEMBERS.
 *
 * Why a Proxy, and not a list taken from walk.ts's text: the walk reads members in walk.ts,
 * in `signatureClaim` (crypto/signing.ts) and in helpers, by literal and by `in`; a Proxy
 * sees every read, whatever code makes it and however it is spelled, the day it is written.
 * What it cannot see is a branch no record reaches: hence every vector, and generated
 * records that set, drop and retype members (LINKED_MEMBERS' and others) of a Session that
 * is then signed and linked again, so that the walk goes past them. And each name of
 * LINKED_MEMBERS must be seen read at least once: so the records do reach every read the
 * list names, and a name taken out of the list makes this test fail.
 */

/** Every member name the walk looked at; "(every member)" when it listed the keys. */
const EVERY = "(every member)";

function recording(value: JsonObject, seen: Set<string>): JsonObject {
  const note = (name: string | symbol): void => void seen.add(typeof name === "string" ? name : `symbol ${String(name.description)}`);
  return new Proxy(value, {
    get(target, name, receiver) {
      // The walk's own reads by name; what a JavaScript engine asks of any object (the
      // `then` of an await, `toJSON`) would be a name too, and is one the walk must not need.
      note(name);
      return Reflect.get(target, name, receiver) as unknown;
    },
    has(target, name) {
      note(name);
      return Reflect.has(target, name);
    },
    getOwnPropertyDescriptor(target, name) {
      note(name);
      return Reflect.getOwnPropertyDescriptor(target, name);
    },
    ownKeys(target) {
      seen.add(EVERY);
      return Reflect.ownKeys(target);
    },
  });
}

/** The members the sequential walk reads of `bytes`' Lines, without `onLine` (the split walks' case). */
function membersRead(bytes: Uint8Array, options: WalkOptions & { readonly maxRowBytes?: number } = {}): Set<string> {
  const seen = new Set<string>();
  const walk = new ChainWalk({ ...(options.trust === undefined ? {} : { trust: options.trust }) });
  const splitter = new RowSplitter(options.maxRowBytes ?? 1 << 20);
  const step = (row: Row): void => {
    if (walk.done) return;
    if (row.code !== "row") return walk.step(row);
    const read: ReadRow = readRow(row.bytes);
    walk.step(row, read.ok && isJsonObject(read.value) ? { ...read, value: recording(read.value, seen) } : read);
  };
  for (const row of splitter.push(bytes)) step(row);
  for (const row of splitter.end()) step(row);
  walk.finish();
  return seen;
}

const linked = new Set<string>(LINKED_MEMBERS);

function expectLinked(seen: Set<string>, what: string): void {
  expect(
    [...seen].filter((name) => !linked.has(name)),
    `${what}: members the walk reads that LINKED_MEMBERS lacks`,
  ).toEqual([]);
}

function aarlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? aarlFiles(join(dir, e.name)) : e.name.endsWith(".aarl") ? [join(dir, e.name)] : [],
  );
}

describe("LINKED_MEMBERS holds every member of a Line the walk reads", () => {
  const everRead = new Set<string>();

  it("on every record under vectors/, with each chain vector's trust set, at two row bounds", () => {
    const files = aarlFiles(vectorPath("."));
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const maxRowBytes of [1 << 20, 200]) {
        const seen = membersRead(bytes, { maxRowBytes });
        expectLinked(seen, file);
        for (const name of seen) everRead.add(name);
      }
    }
    for (const entry of manifestEntries("chain")) {
      const trust = entry.input["trust"] as string[] | null;
      if (trust === null) continue;
      const seen = membersRead(readFileSync(vectorPath(String(entry.input["record"]))), { trust });
      expectLinked(seen, entry.id);
      for (const name of seen) everRead.add(name);
    }
    // Each name of the list is one the walk reads on some vector: none can leave the list
    // unnoticed, and the list holds no name the walk has stopped reading.
    expect([...everRead].sort()).toEqual([...LINKED_MEMBERS].sort());
  });

  describe("on generated Sessions whose members are set, dropped or given another kind of value, signed and linked again", () => {
    let lines: Line[];

    beforeAll(async () => {
      // open, calls (intent, outcome), a parked call and its decision, close; then a second
      // Session, so that a later `open` and its `prev_session_tail` are walked.
      const path = join(tempDir(), "session.aarl");
      await writeSession(path, { calls: 3 });
      await writeSession(path, { calls: 1 });
      lines = readLines(path);
    });

    const names = fc.oneof(
      fc.constantFrom(...LINKED_MEMBERS),
      fc.constantFrom("line_type", "tool_id", "policy", "verdict", "request_digest", "response_digest", "time", "reason", "unknown"),
      fc.string({ maxLength: 12 }),
    );
    const edit = fc.record({
      line: fc.nat(),
      name: names,
      value: fc.option(
        fc.oneof(
          fc.constantFrom<JsonValue>("open", "intent", "outcome", "decision", "close", "checkpoint", 0, 1, 2 ** 53 - 1, "call-0", "apr-1", {}, []),
          // Any other value a Line can hold (no `null`, no negative or unsafe integer: outside the canonical form, SPEC §3).
          fc.string({ maxLength: 8 }),
          fc.nat(),
          fc.boolean(),
          fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.nat()), { maxLength: 3 }),
          fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(fc.string({ maxLength: 4 }), fc.nat()), { maxKeys: 3 }),
        ),
        { nil: undefined },
      ),
    });

    it("[M8.9] the walk reads no member the list lacks, wherever it stops", () => {
      fc.assert(
        fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), fc.boolean(), (edits, chain) => {
          const edited = lines.map((l) => ({ ...l }));
          for (const e of edits) {
            const line = edited[e.line % edited.length] ?? {};
            if (e.value === undefined) delete line[e.name];
            else line[e.name] = e.value;
          }
          const bytes = new TextEncoder().encode(reseal(edited, { chain }));
          expectLinked(membersRead(bytes), JSON.stringify(edits));
        }),
        { numRuns: 300 },
      );
    });
  });
});
