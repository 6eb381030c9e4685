#!/usr/bin/python3
"""Run the repository's test vectors against aegis_verify.py (written from SPEC.md alone).

    /usr/bin/python3 conformance/python/run_vectors.py [--by-source] [--pure-python] [VECTORS_DIR]

Prints one line per failure, saying what differed, then exactly `N passed, N failed`: every
check from every source below. On stderr, a `# manifest.json:` line says how many of the
manifest's vectors ran and passed, the count `aegis vectors` gives.
Exit status 0 only when every check passed. `--by-source` also prints a count per source
before the last line. `--pure-python` computes every Ed25519 equation in Python instead of
letting libsodium compute step 4 (the strict steps 1-3 are always Python; see
aegis_verify.verify_strict). The Ed25519 vectors are always run on both paths.

Sources, each used when present:
  manifest.json                     kinds chain, canonical, ed25519
  chains/expected.json              older chain format (vectors/README.md)
  canonical/cases.json              older canonical format
  ed25519/strict.json               older strict-Ed25519 format
  external/ed25519-speccheck/       cases.json + expected.json
  external/wycheproof/              ed25519_test.json + expected.json (strict verdicts)
  external/rfc8032/                 the five RFC 8032 section 7.1 vectors
  external/rust-aegis/              expected.json (asserted fields), its inferred values,
                                    derived checks its SOURCE.md describes, golden Session
                                    (SPEC 11.2)
  external/rfc8785/                 input/*.json -> output/*.json
  built-in                          SPEC 11.1 example, the fourteen small-order encodings
                                    (and the list SPEC 8.5 publishes), the manifest digest
                                    SPEC 11.4 publishes
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections import OrderedDict

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import aegis_verify as av  # noqa: E402
import aegis_proof as ap  # noqa: E402

DEFAULT_VECTORS = os.path.normpath(os.path.join(HERE, "..", "..", "vectors"))
CHAIN_FIELDS = ("verdict", "reason", "text", "coverage", "key_ids", "trust_label",
                "lines", "sessions", "head", "exit_code")
NOT_JSON = "not JSON: "
# The one reader message SPEC 8.3 makes exact: compared whole, not by its prefix.
NOT_UTF8 = "not JSON: stream did not contain valid UTF-8"


class Runner:
    def __init__(self, root: str, pure: bool):
        self.root = root
        self.pure = pure
        self.counts: "OrderedDict[str, list]" = OrderedDict()
        self.failures: list = []
        self.skipped = 0

    def record(self, source: str, name: str, problems):
        c = self.counts.setdefault(source, [0, 0])
        if problems:
            c[1] += 1
            for p in problems:
                self.failures.append("FAIL [%s] %s: %s" % (source, name, p))
        else:
            c[0] += 1

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    # ------------------------------------------------------------------ chains
    def verify_file(self, rel, trust):
        return av.verify(self.path(rel), trust, pure=self.pure)

    @staticmethod
    def compare_chain(got: dict, expected: dict):
        problems = []
        not_json = (isinstance(expected.get("reason"), dict)
                    and expected["reason"].get("code") == "malformed_line"
                    and str(expected["reason"].get("detail", "")).startswith(NOT_JSON)
                    and expected["reason"].get("detail") != NOT_UTF8)
        for k in CHAIN_FIELDS:
            if k not in expected:
                continue
            e, g = expected[k], got.get(k)
            if not_json and k == "reason":
                e = dict(e)
                g = dict(g) if isinstance(g, dict) else g
                ok = (isinstance(g, dict) and str(g.get("detail", "")).startswith(NOT_JSON))
                e.pop("detail", None)
                if isinstance(g, dict):
                    g.pop("detail", None)
                if ok and e == g:
                    continue
                problems.append("reason: expected %s (detail 'not JSON: ...'), got %s"
                                % (json.dumps(expected[k]), json.dumps(got.get(k))))
                continue
            if not_json and k == "text":
                cut = e.index(NOT_JSON) + len(NOT_JSON)
                if isinstance(g, str) and g[:cut] == e[:cut]:
                    continue
            if e != g:
                problems.append("%s: expected %s, got %s" % (k, json.dumps(e), json.dumps(g)))
        return problems

    def run_chain_entry(self, source, name, rel, trust, expected):
        try:
            got = self.verify_file(rel, trust)
        except Exception as e:  # noqa: BLE001
            self.record(source, name, ["raised %s: %s" % (type(e).__name__, e)])
            return
        self.record(source, name, self.compare_chain(got, expected))

    def chains_expected_json(self):
        p = self.path("chains", "expected.json")
        if not os.path.exists(p):
            return
        for e in json.load(open(p, encoding="utf-8")):
            expected = {k: e[k] for k in CHAIN_FIELDS if k in e}
            self.run_chain_entry("chains/expected.json", e["file"],
                                 os.path.join("chains", e["file"]), e.get("trust"), expected)

    # ------------------------------------------------------------------ manifest
    def manifest(self):
        p = self.path("manifest.json")
        if not os.path.exists(p):
            return
        m = json.load(open(p, encoding="utf-8"))
        entries = m["vectors"] if isinstance(m, dict) else m
        for e in entries:
            kind = e.get("kind")
            src = "manifest:%s" % kind
            name = e.get("id", "?")
            inp = e.get("input", {})
            exp = e.get("expected", {})
            if kind == "chain":
                self.run_chain_entry(src, name, inp["record"], inp.get("trust"), exp)
            elif kind == "canonical":
                try:
                    row = open(self.path(inp["row"]), "rb").read()
                except OSError as err:
                    self.record(src, name, ["cannot read input: %s" % err])
                    continue
                self.record(src, name, self.compare_canonical(row, exp))
            elif kind == "ed25519":
                try:
                    case = json.load(open(self.path(inp["case"]), encoding="utf-8"))
                except OSError as err:
                    self.record(src, name, ["cannot read input: %s" % err])
                    continue
                self.record(src, name, self.compare_ed25519(
                    case["public_key"], case["signature"], bytes.fromhex(case["message"]),
                    exp.get("valid"), exp.get("rejected_at")))
            elif kind == "proof":
                try:
                    data = open(self.path(inp["proof"]), "rb").read()
                    got = ap.check_proof(data, inp["keys"], inp["witnesses"], inp["min_witnesses"])
                except Exception as err:  # noqa: BLE001
                    self.record(src, name, ["raised %s: %s" % (type(err).__name__, err)])
                    continue
                self.record(src, name, [] if got == exp else ["expected %s, got %s" % (json.dumps(exp), json.dumps(got))])
            elif kind == "checkpointed":
                try:
                    cps = [(rel, open(self.path(rel), "rb").read()) for rel in inp["checkpoints"]]
                    got = ap.held(self.path(inp["record"]), cps, inp.get("trust"), inp.get("witnesses"), inp.get("min_witnesses", 0))
                except Exception as err:  # noqa: BLE001
                    self.record(src, name, ["raised %s: %s" % (type(err).__name__, err)])
                    continue
                self.record(src, name, [] if got == exp else ["expected %s, got %s" % (json.dumps(exp), json.dumps(got))])
            elif kind in OUT_OF_SCOPE:
                # The Envelope, Policy Sets, recheck and the MCP relay are aegis-ts extensions
                # (SPEC §14-§17), not part of verifying a Chain: this verifier does not implement them.
                self.skipped += 1
            else:
                self.record("manifest:unknown-kind", name, ["unknown kind %r" % kind])

    # ------------------------------------------------------------------ canonical
    @staticmethod
    def canonical_result(row: bytes):
        """('not_json', msg) | ('out_of_space', fault) | ('canonical', bytes)."""
        if row.endswith(b"\n"):
            row = row[:-1]
        if row.endswith(b"\r"):
            row = row[:-1]
        try:
            value = av.parse_row(row)
        except av.JsonSyntaxError as e:
            return "not_json", e.message
        try:
            return "canonical", av.canonicalize(value)
        except av.ValueSpaceFault as f:
            return "out_of_space", f

    def compare_canonical(self, row: bytes, exp: dict):
        kind, val = self.canonical_result(row)
        want = exp.get("result")
        if want is None:
            want = ("out_of_space" if exp.get("fault") else
                    "canonical" if exp.get("canonical") is not None else "not_json")
        if kind != want:
            detail = {"not_json": lambda v: v,
                      "out_of_space": lambda v: "%s at %s" % (v.code, v.path),
                      "canonical": lambda v: v.decode("utf-8")}[kind](val)
            return ["result: expected %s, got %s (%s)" % (want, kind, detail)]
        problems = []
        if kind == "canonical":
            if "canonical" in exp and val.decode("utf-8") != exp["canonical"]:
                problems.append("canonical: expected %r, got %r"
                                % (exp["canonical"], val.decode("utf-8")))
            if exp.get("sha256") and av.sha256_hex(val) != exp["sha256"]:
                problems.append("sha256: expected %s, got %s"
                                % (exp["sha256"], av.sha256_hex(val)))
        elif kind == "out_of_space":
            f = exp.get("fault") or {}
            if "code" in f and f["code"] != val.code:
                problems.append("fault.code: expected %s, got %s" % (f["code"], val.code))
            if "path" in f and f["path"] != val.path:
                problems.append("fault.path: expected %r, got %r" % (f["path"], val.path))
        return problems

    def canonical_cases_json(self):
        p = self.path("canonical", "cases.json")
        if not os.path.exists(p):
            return
        for c in json.load(open(p, encoding="utf-8")):
            exp = {"result": "out_of_space" if c.get("fault") else
                   ("canonical" if c.get("canonical") is not None else "not_json")}
            for k in ("canonical", "sha256", "fault"):
                if c.get(k) is not None:
                    exp[k] = c[k]
            self.record("canonical/cases.json", c["name"],
                        self.compare_canonical(c["input"].encode("utf-8"), exp))

    # ------------------------------------------------------------------ ed25519
    def compare_ed25519(self, pk_hex, sig_hex, msg: bytes, valid, rejected_at=None):
        try:
            pk, sig = bytes.fromhex(pk_hex), bytes.fromhex(sig_hex)
        except ValueError:
            pk, sig = None, None
        problems = []
        for pure in (True, False) if av.HAVE_NACL else (True,):
            if pk is None:
                ok, step = False, "not hex"
            else:
                ok, step = av.verify_strict(pk, sig, msg, pure=pure)
            label = "python" if pure else "python+libsodium"
            if valid is not None and ok != valid:
                problems.append("%s path: expected %s, got %s (%s)"
                                % (label, "valid" if valid else "invalid",
                                   "valid" if ok else "invalid", step))
            elif rejected_at and step != rejected_at:
                problems.append("%s path: rejected at %s, expected %s"
                                % (label, step, rejected_at))
        return problems

    def ed25519_strict_json(self):
        p = self.path("ed25519", "strict.json")
        if not os.path.exists(p):
            return
        d = json.load(open(p, encoding="utf-8"))
        msg = d["message_utf8"].encode("utf-8")
        for c in d["cases"]:
            self.record("ed25519/strict.json", c["name"], self.compare_ed25519(
                c.get("public_key", d["public_key"]), c["signature"], msg, c["valid"]))

    def speccheck(self):
        d = self.path("external", "ed25519-speccheck")
        if not os.path.exists(os.path.join(d, "cases.json")):
            return
        cases = json.load(open(os.path.join(d, "cases.json"), encoding="utf-8"))
        exp = json.load(open(os.path.join(d, "expected.json"), encoding="utf-8"))
        for e in exp["cases"]:
            c = cases[e["index"]]
            self.record("external/ed25519-speccheck", "case %d" % e["index"],
                        self.compare_ed25519(c["pub_key"], c["signature"],
                                             bytes.fromhex(c["message"]), e["valid"],
                                             e.get("rejected_at")))

    def wycheproof(self):
        d = self.path("external", "wycheproof")
        tp, ep = os.path.join(d, "ed25519_test.json"), os.path.join(d, "expected.json")
        if not (os.path.exists(tp) and os.path.exists(ep)):
            return
        expected = {e["tcId"]: e for e in json.load(open(ep, encoding="utf-8"))}
        for g in json.load(open(tp, encoding="utf-8"))["testGroups"]:
            pk = g["publicKey"]["pk"]
            for t in g["tests"]:
                e = expected.get(t["tcId"])
                name = "tcId %d" % t["tcId"]
                if e is None:
                    self.record("external/wycheproof", name, ["no expected verdict"])
                    continue
                probs = self.compare_ed25519(pk, t["sig"], bytes.fromhex(t["msg"]),
                                             e["strict"] == "valid")
                if e["strict"] != t["result"] and "why" not in e:
                    probs.append("expected.json differs from Wycheproof without a why")
                self.record("external/wycheproof", name, probs)

    def rfc8032(self):
        p = self.path("external", "rfc8032", "vectors.json")
        if not os.path.exists(p):
            return
        for v in json.load(open(p, encoding="utf-8")):
            self.record("external/rfc8032", v["name"], self.compare_ed25519(
                v["public_key"], v["signature"], bytes.fromhex(v["message"]), True))

    # ------------------------------------------------------------------ rust-aegis
    @staticmethod
    def _rust_fields(reason: dict) -> dict:
        """Our reason, in the field names of rust-aegis/expected.json."""
        out = {}
        for k, v in (reason or {}).items():
            if k == "code":
                continue
            if k == "in_flight":
                out["in_flight_calls"] = v
            elif k == "source":
                s = {"kind": v["code"]}
                s.update({kk: vv for kk, vv in v.items() if kk != "code"})
                out["source"] = s
            else:
                out[k] = v
        return out

    def rust_aegis(self):
        d = self.path("external", "rust-aegis")
        p = os.path.join(d, "expected.json")
        if not os.path.exists(p):
            return
        for e in json.load(open(p, encoding="utf-8")):
            name = "%s%s" % (e["file"], "" if e.get("trust") is None else " (trust set)")
            try:
                got = av.verify(os.path.join(d, e["file"]), e.get("trust"), pure=self.pure)
            except Exception as err:  # noqa: BLE001
                self.record("external/rust-aegis", name, ["raised %s" % err])
                continue
            a = e.get("asserted", {})
            fields = self._rust_fields(got["reason"])
            problems = []
            if a.get("verdict", True) and got["verdict"] != e["verdict"]:
                problems.append("verdict: expected %s, got %s" % (e["verdict"], got["verdict"]))
            code = None if got["reason"] is None else got["reason"]["code"]
            if a.get("reason", True) and e.get("reason") is not None and code != e["reason"]:
                problems.append("reason: expected %s, got %s" % (e["reason"], code))
            for f in a.get("fields", []):
                if fields.get(f) != e["fields"].get(f):
                    problems.append("%s: expected %s, got %s" % (
                        f, json.dumps(e["fields"].get(f)), json.dumps(fields.get(f))))
            for k in ("coverage", "key_ids", "trust_label"):
                if a.get(k) and got[k] != e[k]:
                    problems.append("%s: expected %s, got %s"
                                    % (k, json.dumps(e[k]), json.dumps(got[k])))
            self.record("external/rust-aegis", name, problems)
            # Values SOURCE.md derived from the reference's source (not asserted there).
            inf = e.get("inferred") or {}
            iprob = []
            if "coverage" in inf and got["coverage"] != inf["coverage"]:
                iprob.append("coverage: inferred %s, got %s"
                             % (json.dumps(inf["coverage"]), json.dumps(got["coverage"])))
            for f, v in (inf.get("fields") or {}).items():
                if f == "detail_prefix":
                    if not str(fields.get("detail", "")).startswith(v):
                        iprob.append("detail: inferred prefix %r, got %r"
                                     % (v, fields.get("detail")))
                elif fields.get(f) != v:
                    iprob.append("%s: inferred %s, got %s"
                                 % (f, json.dumps(v), json.dumps(fields.get(f))))
            if inf:
                self.record("external/rust-aegis (inferred)", name, iprob)
        self.rust_derived(d)
        self.golden(d)

    def _verify_bytes(self, data: bytes, trust=None):
        return av.verify_stream(io.BytesIO(data), trust, pure=self.pure)

    def rust_derived(self, d):
        """Checks SOURCE.md says the reference's tests make on altered copies."""
        src = "external/rust-aegis (derived)"
        torn = os.path.join(d, "indeterminate", "torn_final_line.aarl")
        if os.path.exists(torn):
            r = self._verify_bytes(open(torn, "rb").read() + b"\n{}\n")
            probs = []
            if r["verdict"] != "tampered" or (r["reason"] or {}).get("code") != "malformed_line" \
                    or (r["reason"] or {}).get("line") != 5:
                probs.append("torn_final_line + '\\n{}\\n': expected tampered malformed_line "
                             "line 5, got %s" % r["text"])
            self.record(src, "torn_final_line + '\\n{}\\n'", probs)
        cp = os.path.join(d, "indeterminate", "reserved_checkpoint.aarl")
        if os.path.exists(cp):
            rows = open(cp, "rb").read().split(b"\n")
            while rows and rows[-1] == b"":
                rows.pop()
            last = av.parse_row(rows[-1])
            last.pop("signature", None)
            rows[-1] = av.canonicalize(last)
            r = self._verify_bytes(b"\n".join(rows) + b"\n")
            probs = [] if r["verdict"] == "tampered" else [
                "checkpoint without signature: expected tampered, got %s" % r["text"]]
            self.record(src, "reserved_checkpoint without its signature", probs)

    def golden(self, d):
        src = "external/rust-aegis (golden, SPEC 11.2)"
        g = os.path.join(d, "golden-session.aarl")
        if not os.path.exists(g):
            return
        pk = "3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c"
        kid = "77a2c2f5952039243c043b69e7e812a2deb69e3271adb3013b8f24d3b8ea40f6"
        r = av.verify(g, None, pure=self.pure)
        self.record(src, "unpinned", Runner.compare_chain(r, {
            "verdict": "verified", "text": "Verified (unpinned)",
            "coverage": {"session_index": 0, "seq": 11}, "key_ids": [kid],
            "trust_label": "unpinned", "lines": 12, "sessions": 1,
            "head": "d75bf577774199b56798fb97fc360735d1064bcc67c1c149e62856349ea147ba"}))
        r = av.verify(g, [pk], pure=self.pure)
        self.record(src, "pinned", Runner.compare_chain(r, {
            "verdict": "verified", "text": "Verified (pinned to %s)" % kid,
            "coverage": {"session_index": 0, "seq": 11}, "trust_label": "pinned"}))
        rows = [x for x in open(g, "rb").read().split(b"\n") if x]
        lines = [av.parse_row(x) for x in rows]
        hashes = [av.sha256_hex(av.canonicalize(v)) for v in lines]
        probs = []
        for i, h in ((0, "ace4118a6a4ec1bf47503431aaa769ebb74de9c61174bf64470561a99abf4066"),
                     (1, "5d923c33bede5bef42ee41556fed00fa0660ab30feb57355b3316a2263ffa7f9"),
                     (11, "d75bf577774199b56798fb97fc360735d1064bcc67c1c149e62856349ea147ba")):
            if hashes[i] != h:
                probs.append("line_hash of Line %d: expected %s, got %s" % (i, h, hashes[i]))
        self.record(src, "line hashes", probs)
        want = ('{"key_id":"%s","line_type":"open","prev_hash":"%s","public_key":"%s",'
                '"schema_version":2,"seq":0}' % (kid, "0" * 64, pk))
        l0 = {k: v for k, v in lines[0].items() if k != "signature"}
        got = av.canonicalize(l0).decode()
        self.record(src, "signing input of Line 0",
                    [] if got == want else ["expected %s, got %s" % (want, got)])
        probs = []
        for i, (raw, v) in enumerate(zip(rows, lines)):
            if av.canonicalize(v) != raw:
                probs.append("row %d is not its own canonical form" % i)
        self.record(src, "every row is canonical (emitter rule M1.1)", probs)
        gd = os.path.join(d, "golden")
        if os.path.isdir(gd):
            for f in sorted(os.listdir(gd)):
                raw = open(os.path.join(gd, f), "rb").read().rstrip(b"\n")
                v = av.parse_row(raw)
                p = []
                if av.canonicalize(v) != raw:
                    p.append("not its own canonical form")
                if raw not in rows:
                    p.append("not a row of golden-session.aarl")
                self.record(src, "golden/" + f, p)

    # ------------------------------------------------------------------ rfc8785
    def rfc8785(self):
        d = self.path("external", "rfc8785")
        if not os.path.isdir(os.path.join(d, "input")):
            return
        src = "external/rfc8785"
        for f in sorted(os.listdir(os.path.join(d, "input"))):
            raw = open(os.path.join(d, "input", f), "rb").read()
            out = open(os.path.join(d, "output", f), "rb").read().rstrip(b"\n")
            kind, val = self.canonical_result(raw)
            if f == "structures.json":
                # SPEC 3.2 refuses its 56.0; expected fault, and with 56 the output.
                p = []
                if kind != "out_of_space" or val.code != "float_not_allowed" \
                        or val.path != "$.1.\n":
                    p.append("expected float_not_allowed at '$.1.\\n', got %s %r"
                             % (kind, getattr(val, "path", val)))
                self.record(src, f + " (56.0 refused)", p)
                kind, val = self.canonical_result(raw.replace(b"56.0", b"56"))
                f = f + " (56.0 written 56)"
            if kind != "canonical":
                self.record(src, f, ["expected canonical, got %s" % kind])
            elif val != out:
                self.record(src, f, ["expected %r, got %r" % (out, val)])
            else:
                self.record(src, f, [])

    # ------------------------------------------------------------------ built-in
    def builtin(self):
        src = "built-in"
        row = ('{ "tool_id": "echo", "seq": 7,\n  "decision_axes": { "role": "ops", '
               '"capability": "fs.read",\n    "fs": { "path_raw": "~/notes.md", '
               '"path_canonical": "/home/a/notes.md" } },\n  "line_type": "outcome",\n  '
               '"prev_hash": "0000000000000000000000000000000000000000000000000000000000000000" }')
        c = av.canonicalize(av.parse_row(row))
        want = "9017de5e13e0a12b261e1960d0d0bc9220c6b7ef501b7dd189141e6327377664"
        self.record(src, "SPEC 11.1 example", [] if av.sha256_hex(c) == want else
                    ["sha256 %s, expected %s" % (av.sha256_hex(c), want)])
        enc = av.small_order_encodings()
        p = []
        if len(enc) != 14:
            p.append("%d small-order encodings, SPEC 8.5 says fourteen" % len(enc))
        for e in enc:
            pt = av.point_decode(e)
            if pt is None or not av.is_small_order(pt):
                p.append("%s is not a small-order point" % e.hex())
        self.record(src, "fourteen small-order encodings (SPEC 8.5)", p)
        # The small-order encodings are refused as R and as A, before any equation.
        p = []
        good_pk = bytes.fromhex("3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c")
        for e in enc:
            ok, step = av.verify_strict(good_pk, e + bytes(32), b"x", pure=True)
            if ok or step != "step2_r_small_order":
                p.append("R=%s: %s" % (e.hex(), step))
            ok, step = av.verify_strict(e, bytes.fromhex("58" + "66" * 31) + bytes(32), b"x",
                                        pure=True)
            if ok or step != "step3_a_small_order":
                p.append("A=%s: %s" % (e.hex(), step))
        self.record(src, "small-order R and A refused at steps 2 and 3", p)

    def spec_small_order(self):
        """SPEC 8.5 lists the fourteen small-order encodings; compare with the curve's."""
        spec = os.path.join(os.path.dirname(self.root), "SPEC.md")
        if not os.path.exists(spec):
            return
        import re
        listed = re.findall(r"^([0-9a-f]{64})  order [1248]\b",
                            open(spec, encoding="utf-8").read(), re.M)
        rebuilt = sorted(e.hex() for e in av.small_order_encodings())
        self.record("built-in", "small-order encodings listed in SPEC 8.5",
                    [] if sorted(listed) == rebuilt else
                    ["SPEC.md lists %d (%s), the curve gives %d"
                     % (len(listed), ", ".join(sorted(set(listed) ^ set(rebuilt))),
                        len(rebuilt))])

    def manifest_digest(self):
        """SPEC 11.4 publishes the manifest's SHA-256; check it when SPEC.md sits beside
        the vectors directory."""
        spec = os.path.join(os.path.dirname(self.root), "SPEC.md")
        man = self.path("manifest.json")
        if not (os.path.exists(spec) and os.path.exists(man)):
            return
        import re
        m = re.search(r"manifest's SHA-256 is `([0-9a-f]{64})`",
                      open(spec, encoding="utf-8").read())
        if not m:
            return
        got = av.sha256_hex(open(man, "rb").read())
        self.record("built-in", "manifest SHA-256 (SPEC 11.4)",
                    [] if got == m.group(1) else
                    ["SPEC.md says %s, manifest.json hashes to %s" % (m.group(1), got)])

    # ------------------------------------------------------------------ all
    def run(self):
        self.manifest()
        self.chains_expected_json()
        self.canonical_cases_json()
        self.ed25519_strict_json()
        self.speccheck()
        self.wycheproof()
        self.rfc8032()
        self.rust_aegis()
        self.rfc8785()
        self.builtin()
        self.spec_small_order()
        self.manifest_digest()


OUT_OF_SCOPE = ("envelope", "policy", "recheck", "relay")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    by_source = "--by-source" in argv
    pure = "--pure-python" in argv
    rest = [a for a in argv if a not in ("--by-source", "--pure-python")]
    if any(a.startswith("-") for a in rest) or len(rest) > 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = os.path.abspath(rest[0]) if rest else DEFAULT_VECTORS
    t0 = time.monotonic()
    r = Runner(root, pure)
    r.run()
    for line in r.failures:
        print(line)
    passed = sum(c[0] for c in r.counts.values())
    failed = sum(c[1] for c in r.counts.values())
    if by_source:
        for s, (p, f) in r.counts.items():
            print("# %-45s %4d passed, %d failed" % (s, p, f))
        print("# %.2fs" % (time.monotonic() - t0))
    # The last line counts every check, from every source; `aegis vectors` counts the
    # manifest's vectors alone. This line says how the two relate (vectors/README.md).
    in_manifest = [c for s, c in r.counts.items() if s.startswith("manifest:")]
    m_passed = sum(c[0] for c in in_manifest)
    m_failed = sum(c[1] for c in in_manifest)
    print("# manifest.json: %d of its %d vectors passed, %d failed, %d not run (kinds %s, which this verifier"
          " does not implement); %d more checks from external/ and built-in cases"
          % (m_passed, m_passed + m_failed + r.skipped, m_failed, r.skipped, ", ".join(OUT_OF_SCOPE),
             passed + failed - m_passed - m_failed), file=sys.stderr)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
