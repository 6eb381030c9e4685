#!/usr/bin/env node
// The built CLI lives in dist/; `npm ci` builds it (the root `prepare` script).
import { main } from "../dist/main.js";

process.exitCode = await main(process.argv.slice(2));
