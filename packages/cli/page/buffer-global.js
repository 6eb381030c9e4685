// The browser has no Buffer; @aegis/format's verifier uses it. esbuild injects this module
// wherever the bundle names the global, so the page carries the `buffer` package's Buffer.
export { Buffer } from "buffer";
