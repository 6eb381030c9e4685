import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { GENERATED_DIRS, generateVectors, writeVectorSet } from "./index.js";

/**
 * `npm run vectors:generate`: rebuild the generated parts of `vectors/` from scratch. A
 * deliberate format change regenerates here, and commits SPEC.md, an ADR and the new
 * files together; the test suite fails while the committed files differ.
 */
const root = fileURLToPath(new URL("../../../vectors/", import.meta.url));
const set = await generateVectors(root);
for (const dir of GENERATED_DIRS) await rm(join(root, dir), { recursive: true, force: true });
await writeVectorSet(set, root);
const manifest = set.files.get("manifest.json") ?? new Uint8Array();
const digest = createHash("sha256").update(manifest).digest("hex");
// SPEC §11.4 publishes the manifest's digest: keep it in step with the files.
const specPath = fileURLToPath(new URL("../../../SPEC.md", import.meta.url));
const spec = await readFile(specPath, "utf8");
const pinned = /The manifest's SHA-256 is `[^`]*`\./;
if (!pinned.test(spec)) throw new Error('SPEC.md has no "The manifest\'s SHA-256 is `...`." sentence to update');
await writeFile(specPath, spec.replace(pinned, `The manifest's SHA-256 is \`${digest}\`.`));
const negative = set.vectors.filter((v) => v.flags[0] === "negative").length;
process.stdout.write(
  `wrote ${set.vectors.length} vectors (${negative} negative) and ${set.files.size} files to ${root}\n` +
    `manifest.json sha256 ${digest} (written into SPEC.md §11.4)\n`,
);
