/**
 * The verifier (`packages/format/src/verify/`) is a core with drivers around it (issue 51): the
 * core (the walk, the verdict, the signature checker, the unfinished-call ledger, the piece
 * formats and the piece driver the page and `--threads` share) imports nothing else; the
 * threads import the core; each driver (one pass, a file split across threads, many files, a
 * verifying read) imports the core and the threads, and never another driver; the way in
 * chooses the driver (and the one file's thread entry, the worker). Every file is in exactly one layer, so a new one must be placed.
 */
export const LAYERS = {
  core: [
    "deferred-checks",
    "exit-code",
    "piece-answer",
    "piece-cutter",
    "piece-rows",
    "row-verifier",
    "row-work",
    "signature-batch",
    "signature-checker",
    "split-tuning",
    "split-walk",
    "unfinished-calls",
    "verdict",
    "verify-options",
    "walk",
  ],
  threads: ["check-pool", "file-messages", "row-pool", "row-worker", "signature-pool", "signature-worker", "worker-pool", "worker-url"],
  drivers: ["file-worker", "many-files", "one-pass", "split-file", "verifying-read"],
  // The ways in: a record's verification, and a thread of the one file (which starts any worker).
  entry: ["verify-record", "worker-entry"],
} as const;
