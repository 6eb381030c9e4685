// The CLI from the packages' compiled modules, one file each, as the bin ran it before it ran
// the one file (ADR 0045). The one file's chunks follow this module graph (scripts/bundle.mjs:
// each dynamic import a chunk of its own), so start-up.test.ts reads what a command loads here,
// file by file, where the one file would show one file.
import { launch } from "../../dist/launch.js";

process.exitCode = await launch(process.argv.slice(2));
