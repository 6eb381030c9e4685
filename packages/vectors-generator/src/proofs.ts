import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SigningKey } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { answerVector, type Vector } from "@aegis/vectors/oracle";
import {
  SIGNATURE_TYPE,
  TreeHasher,
  cosignCheckpoint,
  formatTlogProof,
  formatVerifierKey,
  leafHash,
  noteVerifier,
  parseNote,
  parseTlogProof,
  readCheckpointText,
  signCheckpoint,
  type GivenCheckpoint,
} from "@aegis/proof";
import type { Polarity, VectorSet } from "./vector-set.js";

/**
 * SPEC §19: proofs checked offline, and records held to checkpoints. Cut from the golden
 * Session and Go's checkpoints and proofs over it (`external/c2sp-go`), each changed in one
 * way. The witness key is fixed (seed of 11s) and so is its cosignature's time, so the
 * files are the same bytes on every run.
 */
export async function proofVectors(set: VectorSet, source: string): Promise<void> {
  const dev = insecureDevKey();
  const key = dev.publicKeyHex;
  const golden = await readFile(join(source, "external/rust-aegis/golden-session.aarl"), "utf8");
  const go = (file: string): Promise<Buffer> => readFile(join(source, "external/c2sp-go", file));
  const checkpoint12 = (await go("size-12/checkpoint")).toString("utf8");
  const witness = SigningKey.fromSeed(new Uint8Array(32).fill(11));
  const witnessKey = formatVerifierKey(noteVerifier("witness.example/w1", SIGNATURE_TYPE.cosignatureV1, witness.publicKey));
  const ORIGIN = "example.org/aegis/test";

  const proofOf = async (
    index: number,
    change: (proof: ReturnType<typeof parseTlogProof>) => ReturnType<typeof parseTlogProof>,
    checkpoint?: string,
  ): Promise<string> => {
    const proof = parseTlogProof(await go(`size-12/${index}.tlog-proof`));
    const changed = change(checkpoint === undefined ? proof : { ...proof, checkpoint: Buffer.from(checkpoint) });
    return formatTlogProof(changed);
  };
  const same = <T>(p: T): T => p;
  const flip = (bytes: Buffer, at: number): Buffer => Buffer.from(bytes.map((b, i) => (i === at ? b ^ 1 : b)));

  // A checkpoint whose text names another origin than the key name it is signed under.
  const otherOrigin = (() => {
    const text = checkpoint12.replace(`${ORIGIN}\n`, "example.org/aegis/other\n").split("\n\n")[0] ?? "";
    const signed = signCheckpoint({ ...readCheckpointText(`${text}\n`), origin: ORIGIN }, dev);
    return `${text}\n\n${signed.split("\n\n")[1] ?? ""}`;
  })();
  const cosigned = cosignCheckpoint(checkpoint12, witness, "witness.example/w1", 1_780_000_000n);
  // SPEC §19.3: a quorum counts witness keys. A second witness (seed of 12s); w1's line written
  // twice; w1's key given again under another name, and cosigning under it.
  const second = SigningKey.fromSeed(new Uint8Array(32).fill(12));
  const secondKey = formatVerifierKey(noteVerifier("witness.example/w2", SIGNATURE_TYPE.cosignatureV1, second.publicKey));
  const aliasKey = formatVerifierKey(noteVerifier("witness.example/w1-alias", SIGNATURE_TYPE.cosignatureV1, witness.publicKey));
  const repeatedLine = (() => {
    const lines = cosigned.split("\n");
    return `${cosigned}${lines.at(-2) ?? ""}\n`;
  })();
  const twoWitnesses = cosignCheckpoint(cosigned, second, "witness.example/w2", 1_780_000_001n);
  const underAlias = cosignCheckpoint(cosigned, witness, "witness.example/w1-alias", 1_780_000_002n);

  const proofs: readonly (readonly [string, Polarity, string, readonly string[], readonly string[], number, string])[] = [
    ["proof_signed_outcome", "positive", await proofOf(3, same), [key], [], 0, "Go's proof of Line 4, a signed outcome: included, its own signature checks."],
    [
      "proof_unsigned_intent",
      "positive",
      await proofOf(1, same),
      [key],
      [],
      0,
      "Go's proof of Line 2, an intent: included; the checkpoint alone authenticates it.",
    ],
    [
      "proof_wrong_key",
      "negative",
      await proofOf(3, same),
      [SigningKey.fromSeed(new Uint8Array(32).fill(9)).publicKeyHex],
      [],
      0,
      "A good proof checked under another key: its checkpoint is signed by no key given.",
    ],
    [
      "proof_wrong_origin",
      "negative",
      await proofOf(3, same, otherOrigin),
      [key],
      [],
      0,
      "The checkpoint's origin line names another log than the key name it is signed under.",
    ],
    [
      "proof_altered_hash",
      "negative",
      await proofOf(3, (p) => ({ ...p, hashes: p.hashes.map((h, i) => (i === 1 ? flip(h, 5) : h)) })),
      [key],
      [],
      0,
      "One bit of the second proof hash flipped.",
    ],
    [
      "proof_altered_line",
      "negative",
      await proofOf(3, (p) => ({ ...p, extra: Buffer.from((p.extra ?? Buffer.alloc(0)).toString("utf8").replace("rate_limited", "allowed_xxxx")) })),
      [key],
      [],
      0,
      "The Line in `extra` edited: its leaf is not in the tree.",
    ],
    ["proof_index_out_of_range", "negative", await proofOf(3, (p) => ({ ...p, index: 12 })), [key], [], 0, "Index 12 in a tree of 12 Lines."],
    ["proof_other_index", "negative", await proofOf(3, (p) => ({ ...p, index: 2 })), [key], [], 0, "Line 4's proof claiming index 2."],
    [
      "proof_cosigned",
      "positive",
      await proofOf(3, same, cosigned),
      [key],
      [witnessKey],
      1,
      "The checkpoint carries a witness's cosignature/v1; one witness required, one cosigned.",
    ],
    ["proof_cosignature_missing", "negative", await proofOf(3, same), [key], [witnessKey], 1, "One witness required; the checkpoint carries no cosignature."],
    [
      "proof_two_witnesses",
      "positive",
      await proofOf(3, same, twoWitnesses),
      [key],
      [witnessKey, secondKey],
      2,
      "Two witnesses required; two witnesses with keys of their own cosigned.",
    ],
    [
      "proof_cosignature_repeated",
      "negative",
      await proofOf(3, same, repeatedLine),
      [key],
      [witnessKey, secondKey],
      2,
      "Two witnesses required; the checkpoint carries one witness's cosignature line twice: one witness, too few.",
    ],
    [
      "proof_witness_key_under_two_names",
      "negative",
      await proofOf(3, same, underAlias),
      [key],
      [witnessKey, aliasKey],
      2,
      "Two witnesses required; one key, given under two names, cosigned under each: one witness, too few.",
    ],
    [
      "proof_witness_key_under_two_names_alias_given_first",
      "positive",
      await proofOf(3, same, underAlias),
      [key],
      [aliasKey, witnessKey],
      1,
      "One key given under two names, the alias first, cosigned under each (the other name's line first): cosigned names it by the first name given.",
    ],
    [
      "proof_two_witnesses_given_in_other_order",
      "positive",
      await proofOf(3, same, twoWitnesses),
      [key],
      [secondKey, witnessKey],
      2,
      "Two witnesses cosigned, their keys given in the other order than the checkpoint's lines: cosigned follows the order given.",
    ],
  ];
  for (const [id, polarity, text, keys, witnesses, min, description] of proofs) {
    const path = set.file(`proofs/${id}.tlog-proof`, text);
    const input = { proof: path, keys, witnesses, min_witnesses: min };
    set.add({
      id,
      kind: "proof",
      description,
      spec: ["19.3"],
      flags: [polarity, "proof"],
      input,
      expected: await answerVector({ kind: "proof", proof: Buffer.from(text), keys, witnesses, minWitnesses: min }),
    });
  }

  // Records held to checkpoints (SPEC §19.4).
  const goldenPath = set.file("proofs/golden.aarl", golden);
  const cutPath = set.file("proofs/cut_at_8.aarl", `${golden.split("\n").slice(0, 8).join("\n")}\n`);
  const tornPath = set.file("proofs/cut_at_8_torn.aarl", `${golden.split("\n").slice(0, 8).join("\n")}\n${(golden.split("\n")[8] ?? "").slice(0, 40)}`);
  const crashedPath = set.file("proofs/crashed_after_intent.aarl", `${golden.split("\n").slice(0, 2).join("\n")}\n`);
  const twelve = set.file("proofs/golden-12.checkpoint", checkpoint12);
  const five = set.file("proofs/golden-5.checkpoint", await go("size-5/checkpoint"));
  const root12 = readCheckpointText(parseNote(Buffer.from(checkpoint12)).text).root;
  const forged = set.file("proofs/forged-5.checkpoint", signCheckpoint({ origin: ORIGIN, size: 5, root: root12, extensions: [] }, dev));
  const root5 = readCheckpointText(parseNote(await go("size-5/checkpoint")).text).root;
  const forged12 = set.file("proofs/forged-12.checkpoint", signCheckpoint({ origin: ORIGIN, size: 12, root: root5, extensions: [] }, dev));
  const crashedTree = readCheckpointText(`${ORIGIN}\n2\n${rootOfFirst(golden, 2)}\n`);
  const crashedCheckpoint = set.file("proofs/crashed-2.checkpoint", signCheckpoint(crashedTree, dev));

  const held: readonly (readonly [string, Polarity, string, readonly string[], string])[] = [
    ["checkpoint_matches", "positive", goldenPath, [twelve, five], "The golden Session under Go's checkpoints of 12 and of 5 Lines: both match."],
    [
      "checkpoint_truncated",
      "negative",
      cutPath,
      [twelve],
      "The golden Session cut after Line 8 (Indeterminate alone) under a checkpoint of 12: Tampered, truncated.",
    ],
    [
      "checkpoint_truncated_torn_tail",
      "negative",
      tornPath,
      [twelve],
      "The record cut after Line 8 with the first 40 bytes of Line 9 torn after it, under a checkpoint of 12: truncated, and lines counts the 8 Lines the walk accepted, not the torn row.",
    ],
    ["checkpoint_mismatch", "negative", goldenPath, [forged], "A checkpoint of 5 Lines, signed by the Session's key, stating the root of 12."],
    [
      "checkpoint_inconsistent",
      "negative",
      goldenPath,
      [five, forged],
      "Two signed checkpoints of one origin and 5 Lines with different roots: the record forked.",
    ],
    [
      "checkpoint_truncated_before_mismatch",
      "negative",
      cutPath,
      [forged, twelve],
      "The record cut after Line 8, under a mismatched checkpoint of 5 Lines, then Go's of 12: the precedence is by kind first, so truncated (the second given) is the verdict, not the mismatch given before it.",
    ],
    [
      "checkpoint_inconsistent_beyond_record",
      "negative",
      cutPath,
      [twelve, forged12],
      "The record cut after Line 8, under two checkpoints of 12 Lines with different roots: both are beyond the record, so neither can be signed by a Session's key and they take no part in inconsistent_checkpoints; truncated (the first given).",
    ],
    [
      "checkpoint_anchors_tail",
      "positive",
      crashedPath,
      [crashedCheckpoint],
      "A Session cut after its first intent, under a checkpoint of both Lines: Verified, the call still in flight.",
    ],
  ];
  // SPEC §19.4: checkpoints cosigned by witnesses, and the witnesses required. w1 and w2 are the
  // proofs' witnesses; w3 (seed of 13s) is one the vectors do not give.
  const third = SigningKey.fromSeed(new Uint8Array(32).fill(13));
  const cosign = (note: string, by: SigningKey, name: string, time: bigint): string => cosignCheckpoint(note, by, name, time);
  const byBoth = cosign(cosign(checkpoint12, witness, "witness.example/w1", 1_780_000_000n), second, "witness.example/w2", 1_780_000_001n);
  const byW1W3 = cosign(cosign(checkpoint12, witness, "witness.example/w1", 1_780_000_000n), third, "witness.example/w3", 1_780_000_003n);
  const forgedW2 = (() => {
    const lines = byBoth.split("\n");
    const last = lines.at(-2) ?? "";
    const blob = Buffer.from(last.slice(last.lastIndexOf(" ") + 1), "base64");
    blob[20] = (blob[20] ?? 0) ^ 1;
    return [...lines.slice(0, -2), `${last.slice(0, last.lastIndexOf(" ") + 1)}${blob.toString("base64")}`, ""].join("\n");
  })();
  const twoNames = cosign(cosign(checkpoint12, witness, "witness.example/w1", 1_780_000_000n), witness, "witness.example/w1-alias", 1_780_000_002n);
  const witnessed: readonly (readonly [string, Polarity, string, readonly string[], number, string])[] = [
    [
      "checkpoint_witnessed",
      "positive",
      set.file("proofs/golden-12-w1-w2.checkpoint", byBoth),
      [witnessKey, secondKey],
      2,
      "Go's checkpoint of the golden Session, cosigned by both witnesses given, two required: Verified, each named.",
    ],
    [
      "checkpoint_witness_not_given",
      "negative",
      set.file("proofs/golden-12-w1-w3.checkpoint", byW1W3),
      [witnessKey, secondKey],
      2,
      "Cosigned by w1 and by w3, a key not given: one of the two required, Indeterminate too_few_witnesses.",
    ],
    [
      "checkpoint_witness_forged",
      "negative",
      set.file("proofs/golden-12-w2-forged.checkpoint", forgedW2),
      [witnessKey, secondKey],
      1,
      "w2's cosignature altered in one bit: a cosignature by a given key that does not check refuses the checkpoint, Tampered checkpoint_unsigned.",
    ],
    [
      "checkpoint_witness_under_two_names",
      "negative",
      set.file("proofs/golden-12-w1-alias.checkpoint", twoNames),
      [witnessKey, aliasKey],
      2,
      "One key given under two names, cosigned under each: one witness, too few for two.",
    ],
  ];
  for (const [id, polarity, checkpoint, witnesses, min, description] of witnessed) {
    const bytes = set.files.get(checkpoint) ?? new Uint8Array();
    const given: GivenCheckpoint[] = [{ label: checkpoint, bytes, stated: readCheckpointText(parseNote(bytes).text) }];
    set.add({
      id,
      kind: "checkpointed",
      description,
      spec: ["19.3", "19.4"],
      flags: [polarity, "checkpoint"],
      input: { record: goldenPath, checkpoints: [checkpoint], trust: [key], witnesses, min_witnesses: min },
      expected: await heldAnswer(set.files.get(goldenPath) ?? new Uint8Array(), given, [key], witnesses, min),
    });
  }
  for (const [id, polarity, record, checkpoints, description] of held) {
    const given: GivenCheckpoint[] = [];
    for (const relative of checkpoints) {
      const bytes = set.files.get(relative) ?? new Uint8Array();
      given.push({ label: relative, bytes, stated: readCheckpointText(parseNote(bytes).text) });
    }
    const recordBytes = set.files.get(record) ?? new Uint8Array();
    const input = { record, checkpoints, trust: [key] };
    set.add({
      id,
      kind: "checkpointed",
      description,
      spec: ["19.4"],
      flags: [polarity, "checkpoint"],
      input,
      expected: await heldAnswer(recordBytes, given, [key]),
    });
  }
}

/** The base64 root of a record's first `n` rows, taken as they are (the golden rows are canonical). */
function rootOfFirst(record: string, n: number): string {
  const tree = new TreeHasher();
  for (const row of record.split("\n").slice(0, n)) tree.add(leafHash(row));
  return tree.root().toString("base64");
}

/** The verifier's answer on a record's bytes, walked from a file of their own. */
async function heldAnswer(
  bytes: Uint8Array,
  given: readonly GivenCheckpoint[],
  trust: readonly string[],
  witnesses: readonly string[] | null = null,
  minWitnesses = 0,
): Promise<Extract<Vector, { readonly kind: "checkpointed" }>["expected"]> {
  const dir = await mkdtemp(join(tmpdir(), "aegis-vectors-"));
  try {
    const path = join(dir, "record.aarl");
    await writeFile(path, bytes);
    return await answerVector({ kind: "checkpointed", record: path, checkpoints: given, trust, witnesses, minWitnesses });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
