import { readFile, rm, writeFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { EnvelopeStore, openEnvelope, writePack } from "@aegis/envelope";
import { RequestDigest } from "@aegis/format";
import { parsePolicySet } from "@aegis/policy";
import { answerVector } from "@aegis/vectors/oracle";
import { PACK_ID, REDACTED_AT, inTemp, storeFiles, writeScenario, type ScriptedCall } from "./scenario.js";
import type { Polarity, VectorSet } from "./vector-set.js";

const ALLOW_ALL = parsePolicySet("version: 1\ndefault: allow\nrules: []\n");
const CALLS: readonly ScriptedCall[] = [
  { id: "c1", tool: "fs.read", request: '{"path":"/w/a.md","n":"req-c1"}', response: "resp-c1: # a" },
  { id: "c2", tool: "fs.read", request: '{"path":"/w/b.md","token":"req-c2-secret"}', response: "resp-c2: # b" },
  { id: "c3", tool: "net.get", request: '{"url":"https://x.example/","n":"req-c3"}', response: "resp-c3: <html>" },
];
/**
 * Calls whose Lines carry times (SPEC §13.7), for expiry (§14.12): e1 and e2 before the
 * cutoff, e3 after it; e2's request and e3's are the same bytes, so one entry.
 */
const TIMED: readonly ScriptedCall[] = [
  { id: "e1", tool: "fs.read", at: "2019-03-01T12:00:00.000Z", request: '{"path":"/w/old.md","n":"req-e1"}', response: "resp-e1: # old" },
  { id: "e2", tool: "fs.read", at: "2019-03-01T12:00:01.000Z", request: '{"path":"/w/shared.md","n":"req-shared"}', response: "resp-e2: # then" },
  { id: "e3", tool: "fs.read", at: "2026-06-01T12:00:00.000Z", request: '{"path":"/w/shared.md","n":"req-shared"}', response: "resp-e3: # now" },
];
const CUTOFF = "2020-01-01T00:00:00Z";
const requestOf = (id: string): RequestDigest => RequestDigest.of(new TextEncoder().encode(CALLS.find((c) => c.id === id)?.request ?? ""));

type Shape = "pack" | "store";
interface Case {
  readonly name: string;
  readonly polarity: Polarity;
  readonly spec: readonly string[];
  readonly description: string;
  readonly shape: Shape;
  /** Change the store (before packing, for a pack) or the pack file. */
  readonly alter?: (target: string) => Promise<void>;
  /** For a pack: only these calls' digests. */
  readonly calls?: readonly string[];
  /** The Session recorded, when not CALLS. */
  readonly scenario?: readonly ScriptedCall[];
  /** Expire (a copy of) the store first, with this cutoff (SPEC §14.12). */
  readonly expireBefore?: string;
}

/** Flip one byte of the first stored copy of `needle` in the files given. */
async function flipIn(paths: readonly string[], needle: string): Promise<void> {
  for (const path of paths) {
    const data = await readFile(path);
    const at = data.indexOf(needle);
    if (at === -1) continue;
    data[at] = (data[at] ?? 0) ^ 0x20;
    await writeFile(path, data);
    return;
  }
  throw new Error(`${needle} is not stored`);
}

const segments = async (store: string): Promise<string[]> =>
  (await readdir(store))
    .filter((n) => n.endsWith(".seg"))
    .sort()
    .map((n) => join(store, n));

async function redact(store: string, digest: RequestDigest): Promise<void> {
  const s = await EnvelopeStore.open(store, { now: () => REDACTED_AT });
  try {
    const outcome = await s.redact(digest, "secret token in arguments");
    if (outcome.code !== "redacted") throw new Error(`redaction answered ${outcome.code}`);
  } finally {
    await s.close();
  }
}

const CASES: readonly Case[] = [
  {
    name: "pack_all_present",
    polarity: "positive",
    spec: ["9", "14.1", "14.9"],
    description: "A pack of every entry the record names: each present, hashing to its digest.",
    shape: "pack",
  },
  {
    name: "store_all_present",
    polarity: "positive",
    spec: ["9", "14.1", "14.2", "14.3", "14.4"],
    description: "The store a writer left: descriptor, segment, index; each entry present.",
    shape: "store",
  },
  {
    name: "store_stale_lock",
    polarity: "positive",
    spec: ["14.6"],
    description: "A store whose writer died and left its lock: a reader opens it without the lock and reads every entry.",
    shape: "store",
    alter: async (store) => writeFile(join(store, "writer.lock"), '{"pid":999999999,"host":"gone"}\n'),
  },
  {
    name: "pack_value_altered",
    polarity: "negative",
    spec: ["14.1", "14.3", "14.9"],
    description: "One byte of c2's request changed inside the pack: digest_mismatch.",
    shape: "pack",
    alter: async (pack) => flipIn([pack], "req-c2-secret"),
  },
  {
    name: "store_value_altered",
    polarity: "negative",
    spec: ["14.1", "14.3"],
    description: "One byte of c2's request changed inside the segment: digest_mismatch.",
    shape: "store",
    alter: async (store) => flipIn(await segments(store), "req-c2-secret"),
  },
  {
    name: "pack_some_calls",
    polarity: "negative",
    spec: ["14.1", "14.9"],
    description: "A pack of call c1's entries only: the other digests are missing.",
    shape: "pack",
    calls: ["c1"],
  },
  {
    name: "store_redacted",
    polarity: "negative",
    spec: ["14.8"],
    description: "c2's request redacted: a tombstone with when and why, and the bytes gone.",
    shape: "store",
    alter: async (store) => redact(store, requestOf("c2")),
  },
  {
    name: "pack_redacted",
    polarity: "negative",
    spec: ["14.8", "14.9"],
    description: "A pack made after c2's request was redacted carries its tombstone.",
    shape: "pack",
    alter: async (store) => redact(store, requestOf("c2")),
  },
  {
    name: "store_torn_tail",
    polarity: "negative",
    spec: ["14.5", "14.7"],
    description: "The segment ends in half a frame, as after a crash mid-put: every acknowledged entry is still read, the tail reported.",
    shape: "store",
    alter: async (store) => {
      const [segment] = await segments(store);
      if (segment === undefined) throw new Error("no segment");
      const data = await readFile(segment);
      // The store's first frame again, cut five bytes into its value: a frame cut short.
      // (A frame is a 20-byte prefix and a 36-byte head before its value, SPEC §14.3.)
      const value = data.indexOf('{"path":"/w/a.md"');
      await writeFile(segment, Buffer.concat([data, data.subarray(value - 56, value + 5)]));
      for (const name of (await readdir(store)).filter((n) => n.endsWith(".idx"))) await rm(join(store, name));
    },
  },
  {
    name: "store_damaged_frame",
    polarity: "negative",
    spec: ["14.4", "14.7"],
    description: "c2's frame head spoiled and the index gone: c2's request is missing, its neighbours read, the damage named.",
    shape: "store",
    alter: async (store) => {
      const [segment] = await segments(store);
      if (segment === undefined) throw new Error("no segment");
      const data = await readFile(segment);
      const value = data.indexOf('{"path":"/w/b.md"');
      data.fill(0xee, value - 36, value);
      await writeFile(segment, data);
      for (const name of (await readdir(store)).filter((n) => n.endsWith(".idx"))) await rm(join(store, name));
    },
  },
  {
    name: "store_expired",
    polarity: "negative",
    spec: ["14.8", "14.12"],
    description: `Expired before ${CUTOFF}: e1's entries and e2's response become tombstones with the reason retention; the request e2 shares with e3, which is newer, stays.`,
    shape: "store",
    scenario: TIMED,
    expireBefore: CUTOFF,
  },
  {
    name: "store_expiry_undated",
    polarity: "positive",
    spec: ["14.12", "13.7"],
    description: "Expired before 2099 under a record whose Lines carry no time: when they were named is unknown, so every entry stays.",
    shape: "store",
    expireBefore: "2099-01-01T00:00:00Z",
  },
];

const ALL = ["present", "present", "present", "present", "present", "present"] as const;
const c2RequestIs = (status: string): string[] => ["present", "present", status, "present", "present", "present"];

/**
 * Each case's answer for the six digests (c1..c3, request then response), its damage and
 * its exit code, stated by hand from SPEC §14, independently of the code that computes the
 * vectors; the generator refuses a vector whose computed answer differs.
 */
const STATED: Readonly<Record<string, readonly [statuses: readonly string[], damage: readonly string[], exit: number]>> = {
  pack_all_present: [ALL, [], 0],
  store_all_present: [ALL, [], 0],
  store_stale_lock: [ALL, [], 0],
  pack_value_altered: [c2RequestIs("digest_mismatch"), [], 1],
  store_value_altered: [c2RequestIs("digest_mismatch"), [], 1],
  pack_some_calls: [["present", "present", "missing", "missing", "missing", "missing"], [], 0],
  store_redacted: [c2RequestIs("redacted"), [], 0],
  pack_redacted: [c2RequestIs("redacted"), [], 0],
  store_torn_tail: [ALL, ["torn_tail"], 0],
  store_damaged_frame: [c2RequestIs("missing"), ["damaged_frame"], 2],
  // e1 request, e1 response, e2 request (shared), e2 response, e3 request (the same entry), e3 response.
  store_expired: [["redacted", "redacted", "present", "redacted", "present", "present"], [], 0],
  store_expiry_undated: [ALL, [], 0],
};

/** SPEC §9, §14: a record and an Envelope (a store directory or a pack) per case. */
export async function envelopeVectors(set: VectorSet): Promise<void> {
  for (const c of CASES) {
    await inTemp(async (dir) => {
      const record = await writeScenario(dir, ALLOW_ALL, c.scenario ?? CALLS);
      const store = join(dir, "store");
      const base = `envelope/${c.name}`;
      const recordPath = set.file(`${base}/session.aarl`, record);
      let envelopePath: string;
      if (c.shape === "store") {
        await c.alter?.(store);
        for (const [name, data] of await storeFiles(store)) set.file(`${base}/store/${name}`, data);
        envelopePath = `${base}/store`;
      } else {
        if (c.alter !== undefined && c.name === "pack_redacted") await c.alter(store);
        const pack = join(dir, "envelope.pack");
        const source = await openEnvelope(store);
        try {
          const wanted = CALLS.filter((call) => c.calls === undefined || c.calls.includes(call.id));
          const digests = wanted.flatMap((call) => [
            RequestDigest.of(new TextEncoder().encode(call.request)) as string,
            ...(call.response === undefined ? [] : [RequestDigest.of(new TextEncoder().encode(call.response)) as string]),
          ]);
          await writePack(source, digests, pack, { id: PACK_ID });
        } finally {
          await source.close();
        }
        if (c.alter !== undefined && c.name !== "pack_redacted") await c.alter(pack);
        envelopePath = set.file(`${base}/envelope.pack`, await readFile(pack));
      }
      const expected = await answerVector({
        kind: "envelope",
        record: join(dir, "session.aarl"),
        envelope: c.shape === "store" ? store : join(dir, "envelope.pack"),
        ...(c.expireBefore === undefined ? {} : { expireBefore: c.expireBefore }),
      });
      // What expiry removed says so (SPEC §14.12); what redact removed gives its own reason.
      for (const d of expected.digests)
        if (d.status === "redacted" && (d.reason === "retention") !== (c.expireBefore !== undefined))
          throw new Error(`${c.name}: ${d.digest} redacted for ${d.reason}`);
      const clean = expected.exit_code === 0 && expected.digests.every((d) => d.status === "present") && expected.damage.length === 0;
      if (clean !== (c.polarity === "positive")) throw new Error(`${base}: ${c.polarity} case answered ${JSON.stringify(expected)}`);
      const answered = [expected.digests.map((d) => d.status), expected.damage, expected.exit_code];
      if (JSON.stringify(answered) !== JSON.stringify(STATED[c.name]))
        throw new Error(`${base}: answered ${JSON.stringify(answered)}, stated ${JSON.stringify(STATED[c.name])}`);
      set.add({
        id: base,
        kind: "envelope",
        description: c.description,
        spec: c.spec,
        flags: [c.polarity, "envelope"],
        input: { record: recordPath, envelope: envelopePath, ...(c.expireBefore === undefined ? {} : { expire_before: c.expireBefore }) },
        expected,
      });
    });
  }
}
