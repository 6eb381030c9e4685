#!/usr/bin/env node
// The built CLI lives in dist/; `npm ci` builds it (the root `prepare` script). launch.js
// loads the command line, and of it only the command being run (ADR 0023).
import { launch } from "../dist/launch.js";

process.exitCode = await launch(process.argv.slice(2));
