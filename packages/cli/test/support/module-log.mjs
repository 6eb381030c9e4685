// `node --import ./module-log.mjs ...`: appends the URL of every module file the process
// loads, ES module or CommonJS, one a line, to the file AEGIS_MODULE_LOG names. The tests of
// start-up count them: what `aegis --version` loads is what its start costs.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const log = process.env["AEGIS_MODULE_LOG"];
if (log === undefined || log === "") throw new Error("module-log.mjs needs AEGIS_MODULE_LOG");

// ES modules pass through the loader's hooks (run on a thread of their own: they write the log themselves).
const hooks = `
import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  if (url.startsWith("file:")) appendFileSync(${JSON.stringify(log)}, url + "\\n");
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

// CommonJS modules required from CommonJS do not: they are in require's cache by the end.
const cache = createRequire(import.meta.url).cache;
process.on("exit", () => {
  for (const path of Object.keys(cache)) appendFileSync(log, `file://${path}\n`);
});
