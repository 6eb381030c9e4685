// Runs the built CLI's main() once per argument list read (as JSON) from stdin, with its
// streams captured, and prints per run the exit code and stderr (hostile-properties.test.ts).
import { PassThrough } from "node:stream";
import { main } from "../dist/main.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const argv of JSON.parse(input)) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let err = "";
  stderr.on("data", (chunk) => void (err += chunk.toString()));
  stdout.resume();
  let code;
  try {
    code = await main(argv, { stdout, stderr, stdin: new PassThrough() });
  } catch (error) {
    code = `threw: ${error instanceof Error ? error.stack : String(error)}`;
  }
  results.push({ argv, code, stderr: err });
}
process.stdout.write(JSON.stringify(results));
