#!/usr/bin/env node
// `aegis --version` is answered from a constant (ADR 0023). Anything else runs the one file,
// dist/aegis.mjs, which `npm run build` bundles from the compiled packages
// (scripts/bundle.mjs): the program `npm run bundle` hands a stranger, which starts in about
// half the time of loading the packages' modules one by one (ADR 0045). Each command's code
// is still compiled only when that command runs.
import { printsVersion } from "../dist/launch.js";

if (!printsVersion(process.argv.slice(2))) await import("../dist/aegis.mjs");
