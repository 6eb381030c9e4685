#!/usr/bin/python3
"""Walk every chain vector through two verifiers' command lines and compare them.

    /usr/bin/python3 conformance/python/walk_aegis.py --aegis "node dist/aegis.mjs" [VECTORS_DIR]

For each `chain` vector of the manifest (SPEC 11.4), runs `<aegis> verify` and
aegis_verify.py (this directory's verifier, written from SPEC.md) with the same record and
the same trust (`--key` per key; an empty trust list is an empty trust store), and compares
what SPEC 13.4 fixes: stdout byte for byte, and the exit code. Prints one line per vector
that differs, then exactly `N agreed, N differed`; exit status 0 only when all agreed.
`.ci/run` walks the one-file build under Node 24 with it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_VECTORS = os.path.normpath(os.path.join(HERE, "..", "..", "vectors"))
PYTHON_VERIFIER = os.path.join(HERE, "aegis_verify.py")


def run(command: list) -> tuple:
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "AEGIS_DEBUG": ""})
    return done.stdout, done.returncode


def main(argv: list) -> int:
    aegis = None
    vectors = DEFAULT_VECTORS
    i = 0
    while i < len(argv):
        if argv[i] == "--aegis" and i + 1 < len(argv):
            aegis = shlex.split(argv[i + 1])
            i += 2
        elif argv[i].startswith("--"):
            print("usage: walk_aegis.py --aegis COMMAND [VECTORS_DIR]", file=sys.stderr)
            return 2
        else:
            vectors = argv[i]
            i += 1
    if not aegis:
        print("usage: walk_aegis.py --aegis COMMAND [VECTORS_DIR]", file=sys.stderr)
        return 2
    with open(os.path.join(vectors, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    agreed = differed = 0
    with tempfile.TemporaryDirectory() as tmp:
        empty_store = os.path.join(tmp, "no-keys.txt")
        with open(empty_store, "w", encoding="utf-8") as f:
            f.write("# no keys\n")
        for vector in manifest["vectors"]:
            if vector["kind"] != "chain":
                continue
            record = os.path.join(vectors, vector["input"]["record"])
            trust = vector["input"].get("trust")
            if trust is None:
                pin = []
            elif trust == []:
                pin = ["--trust-store", empty_store]
            else:
                pin = [a for key in trust for a in ("--key", key)]
            ours = run(aegis + ["verify"] + pin + [record])
            theirs = run([sys.executable, PYTHON_VERIFIER] + pin + [record])
            if ours == theirs:
                agreed += 1
            else:
                differed += 1
                print("DIFFER %s: aegis exit %d %r; aegis_verify.py exit %d %r"
                      % (vector["id"], ours[1], ours[0][:300], theirs[1], theirs[0][:300]))
    print("%d agreed, %d differed" % (agreed, differed))
    return 0 if differed == 0 and agreed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
