#!/usr/bin/python3
"""Self-tests of aegis_verify.py on records built here (a tiny emitter per SPEC 4).

    /usr/bin/python3 conformance/python/test_walk.py

These cover readings of SPEC.md that no vector in vectors/ pins; each test names the
section it follows. Signing uses the published development seed (SPEC 11.2), with PyNaCl
when it is installed and otherwise with the RFC 8032 signer below, so that the suite runs on
a machine with nothing but Debian's python3.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import aegis_verify as av  # noqa: E402

try:
    import nacl.bindings as nb
except Exception:  # pragma: no cover
    nb = None


def seed_keypair(seed: bytes):
    """RFC 8032 5.1.5: the public key, and what signing needs, from a 32-byte seed."""
    if nb is not None:
        return nb.crypto_sign_seed_keypair(seed)
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little") & ((1 << 254) - 8) | (1 << 254)
    pk = av.point_encode(av.scalar_mult(a, av.BASE))
    return pk, (a, h[32:], pk)


def sign_detached(msg: bytes, sk) -> bytes:
    """RFC 8032 5.1.6: the 64-byte signature of msg."""
    if nb is not None:
        return nb.crypto_sign(msg, sk)[:64]
    a, prefix, pk = sk
    r = int.from_bytes(hashlib.sha512(prefix + msg).digest(), "little") % av.L
    big_r = av.point_encode(av.scalar_mult(r, av.BASE))
    k = int.from_bytes(hashlib.sha512(big_r + pk + msg).digest(), "little") % av.L
    return big_r + ((r + k * a) % av.L).to_bytes(32, "little")

DEV_SEED = b"aegis-insecure-dev-key-not-real!"
OTHER_SEED = bytes([9]) * 32
SIGNED = {"open", "outcome", "decision", "close", "checkpoint"}


class Emitter:
    """SPEC 4: seq, prev_hash, key_id + signature over the canonical form without
    `signature`, line_hash over the whole canonical form."""

    def __init__(self, seed=DEV_SEED):
        self.rows = []
        self.file_tail = None
        self.new_key(seed)

    def new_key(self, seed):
        pk, sk = seed_keypair(seed)
        self.pk, self.sk = pk, sk
        self.key_id = hashlib.sha256(pk).hexdigest()

    def sign(self, line):
        line["key_id"] = self.key_id
        msg = av.canonicalize({k: v for k, v in line.items() if k != "signature"})
        line["signature"] = sign_detached(msg, self.sk).hex()

    def append(self, line_type, sign=None, raw=False, **members):
        if line_type == "open":
            self.seq, self.tail = 0, "0" * 64
            if self.file_tail is not None:
                members.setdefault("prev_session_tail", self.file_tail)
            members.setdefault("public_key", self.pk.hex())
        line = {"schema_version": 2, "line_type": line_type, "seq": self.seq,
                "prev_hash": self.tail}
        line.update(members)
        if sign if sign is not None else line_type in SIGNED:
            self.sign(line)
        c = av.canonicalize(line)
        self.rows.append(c)
        self.tail = self.file_tail = hashlib.sha256(c).hexdigest()
        self.seq += 1
        return line

    def bytes(self):
        return b"".join(r + b"\n" for r in self.rows)

    def verify(self, trust=None, pure=True):
        # Without libsodium both paths are the pure one.
        return av.verify_stream(io.BytesIO(self.bytes()), trust, pure=pure or nb is None)


def session(e: Emitter, close=True):
    e.append("open")
    e.append("intent", call_id="c1", tool_id="t", request_digest="a" * 64)
    e.append("outcome", call_id="c1", tool_id="t", request_digest="a" * 64,
             policy_set_hash="b" * 64, policy={"status": "allowed"},
             capability={"status": "denied", "reason": "no"},
             execution={"status": "success"}, decision_axes={})
    if close:
        e.append("close")
    return e


class Walk(unittest.TestCase):
    def test_closed_session_verifies_both_paths(self):
        e = session(Emitter())
        for pure in (True, False):
            r = e.verify(pure=pure)
            self.assertEqual(r["text"], "Verified (unpinned)")
            self.assertEqual(r["coverage"], {"session_index": 0, "seq": 3})

    def test_unknown_type_signature_present_key_id_absent_is_tampered(self):
        # SPEC 5.2: signature present, key_id absent -> present failing signature (unsigned)
        e = session(Emitter())
        e.append("attestation", sign=False, signature="0" * 128)
        e.append("close")
        r = e.verify()
        self.assertEqual(r["verdict"], "tampered")
        self.assertEqual(r["reason"]["source"], {"code": "unsigned"})

    def test_unknown_type_key_id_only_is_a_cap(self):
        e = session(Emitter(), close=False)
        e.append("attestation", sign=False, key_id=e.key_id)
        e.append("close")
        r = e.verify()
        self.assertEqual(r["reason"]["code"], "unknown_line_type")
        self.assertEqual(r["coverage"], {"session_index": 0, "seq": 4})

    def test_unknown_type_with_valid_signature_extends_coverage(self):
        e = session(Emitter(), close=False)
        e.append("intent", call_id="c2", tool_id="t", request_digest="a" * 64)
        e.append("attestation", sign=True)
        r = e.verify()
        self.assertEqual(r["reason"]["code"], "unknown_line_type")
        self.assertEqual(r["coverage"], {"session_index": 0, "seq": 4})

    def test_unknown_type_with_bad_signature_is_tampered(self):
        e = session(Emitter(), close=False)
        line = e.append("attestation", sign=True)
        bad = dict(line, extra=1)          # member added after signing
        e.rows[-1] = av.canonicalize(bad)
        r = e.verify()
        self.assertEqual(r["reason"]["code"], "bad_signature")
        self.assertEqual(r["reason"]["source"], {"code": "bad_signature"})

    def test_signed_intent_is_not_rejected(self):
        # SPEC 10: a signature on an intent is not rejected (and not checked)
        e = Emitter()
        e.append("open")
        e.append("intent", sign=True, call_id="c1", tool_id="t", request_digest="a" * 64,
                 )
        e.append("close")
        self.assertEqual(e.verify()["verdict"], "verified")

    def test_intent_with_garbage_signature_is_not_checked(self):
        e = Emitter()
        e.append("open")
        e.append("intent", sign=False, call_id="c1", signature="zz", key_id="nope")
        e.append("close")
        self.assertEqual(e.verify()["verdict"], "verified")

    def test_first_open_with_prev_session_tail_is_not_judged(self):
        # SPEC 8.2 step 5.3 compares only "if tail is set"
        e = Emitter()
        e.file_tail = "c" * 64
        session(e)
        self.assertEqual(e.verify()["verdict"], "verified")

    def test_duplicate_decision_across_sessions(self):
        e = Emitter()
        e.append("open")
        e.append("decision", approval_id="a1", verdict={"verdict": "denied", "reason": "x"})
        e.append("close")
        e.append("open")
        e.append("decision", approval_id="a1", verdict={"verdict": "denied", "reason": "x"})
        e.append("close")
        r = e.verify()
        self.assertEqual(r["reason"]["code"], "duplicate_decision")
        self.assertEqual(r["reason"]["at"], {"session_index": 1, "seq": 1})

    def test_key_change_inside_session_is_key_mismatch(self):
        e = Emitter()
        e.append("open")
        e.new_key(OTHER_SEED)
        e.append("close")
        r = e.verify()
        self.assertEqual(r["reason"]["source"]["code"], "key_mismatch")

    def test_rotation_pinned_and_partial_trust(self):
        e = session(Emitter())
        dev_pk = e.pk.hex()
        e.new_key(OTHER_SEED)
        session(e)
        other_pk = e.pk.hex()
        self.assertEqual(e.verify([dev_pk, other_pk])["text"], "Verified (pinned)")
        r = e.verify([dev_pk])
        self.assertEqual(r["reason"]["code"], "untrusted_key")
        self.assertEqual(r["reason"]["at"], {"session_index": 1, "seq": 0})
        self.assertEqual(r["sessions"], 1)
        self.assertEqual(len(r["key_ids"]), 2)

    def test_session_boundary_missing_tail(self):
        e = session(Emitter())
        e.file_tail = None
        e.append("open")
        r = e.verify()
        # SPEC 8.3: a found that is none is omitted, never null
        self.assertEqual(r["reason"], {"code": "session_boundary_broken", "session_index": 1,
                                       "expected": hashlib.sha256(e.rows[3]).hexdigest()})
        self.assertIn("carries no prev_session_tail", r["text"])

    def test_stripped_signature_on_last_outcome(self):
        # SPEC 8.7
        e = session(Emitter(), close=False)
        line = av.parse_row(e.rows[-1])
        del line["signature"]
        e.rows[-1] = av.canonicalize(line)
        r = e.verify()
        self.assertEqual(r["reason"]["source"], {"code": "unsigned"})

    def test_in_flight_order_repeats_and_reset(self):
        # SPEC 8.1: a list in file order; a call_id written twice appears twice
        e = Emitter()
        e.append("open")
        e.append("intent", call_id="x")
        e.append("intent", call_id="y")
        e.append("intent", call_id="x")
        r = e.verify()
        self.assertEqual(r["reason"], {"code": "unanchored_tail", "session_index": 0,
                                       "in_flight": ["x", "y", "x"]})
        self.assertTrue(r["text"].endswith("; 3 call(s) in flight"))
        e.append("outcome", call_id="x")
        e.append("intent", call_id="z")
        self.assertEqual(e.verify()["reason"]["in_flight"], ["z"])

    def test_unfinished_calls_of_ended_sessions(self):
        # SPEC 13.4: an intent with no outcome when its Session ends (the next open, or
        # its own close at the end); a call_id waiting twice counts twice
        e = Emitter()
        e.append("open")
        e.append("intent", call_id="x")
        e.append("intent", call_id="x")
        e.append("intent", call_id="y")
        e.append("outcome", call_id="x")
        r = e.verify()
        self.assertEqual(r["unfinished_calls"], {"count": 0, "calls": []})
        e.append("open")
        e.append("outcome", call_id="y")
        e.append("intent", call_id="z")
        e.append("close")
        r = e.verify()
        self.assertEqual(r["verdict"], "verified")
        self.assertEqual(r["unfinished_calls"], {"count": 3, "calls": [
            {"session_index": 0, "call_id": "x"}, {"session_index": 0, "call_id": "y"},
            {"session_index": 1, "call_id": "z"}]})

    def test_unfinished_calls_bound(self):
        # SPEC 18: past the waiting bound, the call_id that began to wait first is given up
        saved = av.MAX_WAITING_CALLS
        av.MAX_WAITING_CALLS = 2
        try:
            e = Emitter()
            e.append("open")
            for cid in ("a", "b", "c"):
                e.append("intent", call_id=cid)
            e.append("outcome", call_id="a")
            e.append("outcome", call_id="b")
            e.append("close")
            r = e.verify()
        finally:
            av.MAX_WAITING_CALLS = saved
        self.assertEqual(r["unfinished_calls"], {"count": 2, "calls": [
            {"session_index": 0, "call_id": "a"}, {"session_index": 0, "call_id": "c"}]})

    def test_checkpoint_caps_and_needs_signature(self):
        e = session(Emitter(), close=False)
        e.append("checkpoint")
        e.append("close")
        r = e.verify()
        self.assertEqual(r["reason"]["code"], "reserved_checkpoint")
        self.assertEqual(r["coverage"], {"session_index": 0, "seq": 4})

    def test_tampered_after_cap_wins(self):
        e = session(Emitter(), close=False)
        e.append("attestation", sign=False)
        e.append("close")
        e.rows.append(b"not json")
        e.rows.append(b"{}")
        r = e.verify()
        self.assertEqual(r["reason"]["code"], "malformed_line")
        self.assertEqual(r["reason"]["line"], 6)

    def test_torn_row_followed_by_blank_rows_only(self):
        e = session(Emitter())
        data = e.bytes() + b'{"line_ty' + b"\n \t\n\xc2\xa0\n\r\n"
        r = av.verify_stream(io.BytesIO(data))
        self.assertEqual(r["reason"], {"code": "torn_final_line", "line": 5})

    def test_torn_inside_multibyte_character(self):
        # SPEC 13.5: a torn write can end inside a multi-byte character
        e = session(Emitter())
        r = av.verify_stream(io.BytesIO(e.bytes() + b'{"a":"\xe2\x82'))
        self.assertEqual(r["reason"], {"code": "torn_final_line", "line": 5})

    def test_line_too_long(self):
        e = session(Emitter())
        n = max(len(x) for x in e.rows)
        r = av.verify_stream(io.BytesIO(e.bytes()), limit=n - 1)
        self.assertEqual(r["reason"]["code"], "line_too_long")
        self.assertEqual(r["text"].split(": ", 1)[1],
                         "line %d is longer than %d bytes; not read"
                         % (r["reason"]["line"], n - 1))
        self.assertEqual(av.verify_stream(io.BytesIO(e.bytes()), limit=n)["verdict"],
                         "verified")
        # one \r before the \n is not counted
        crlf = e.bytes().replace(b"\n", b"\r\n")
        self.assertEqual(av.verify_stream(io.BytesIO(crlf), limit=n)["verdict"], "verified")

    def test_over_long_rows(self):
        # SPEC 13.1: blank at any length; otherwise a numbered row that stops the walk
        e = session(Emitter())
        limit = max(len(x) for x in e.rows) + 10
        for pad in (limit + 1, limit + 2, 5 * limit, 70000):
            r = av.verify_stream(io.BytesIO(e.bytes() + b" \t" * pad + b"\n"), limit=limit)
            self.assertEqual((r["verdict"], r["lines"]), ("verified", 4), pad)
            r = av.verify_stream(io.BytesIO(e.bytes() + b" " * pad), limit=limit)
            self.assertEqual(r["verdict"], "verified", pad)
        r = av.verify_stream(io.BytesIO(e.bytes() + b" " * 3 * limit + b"\xff\n"), limit=limit)
        self.assertEqual(r["reason"], {"code": "line_too_long", "line": 5, "limit": limit})
        self.assertEqual(r["lines"], 5)
        torn = e.bytes() + b'{"line_ty\n'
        r = av.verify_stream(io.BytesIO(torn + b"x" * 3 * limit + b"\n"), limit=limit)
        self.assertEqual(r["reason"]["code"], "malformed_line")
        self.assertEqual((r["reason"]["line"], r["lines"]), (5, 5))
        r = av.verify_stream(io.BytesIO(torn + b" " * 3 * limit + b"\n"), limit=limit)
        self.assertEqual(r["reason"], {"code": "torn_final_line", "line": 5})
        # a blank over-long row between Lines changes nothing
        rows = e.rows
        data = rows[0] + b"\n" + b"\xc2\xa0" * limit + b"\r\n" + b"".join(x + b"\n" for x in rows[1:])
        self.assertEqual(av.verify_stream(io.BytesIO(data), limit=limit)["text"],
                         "Verified (unpinned)")

    def test_counts(self):
        # SPEC 13.4: sessions counts opens that reached step 5.7; head is the last accepted
        e = Emitter()
        line = e.append("open", sign=False, key_id=e.key_id, signature="0" * 128)
        r = e.verify()
        self.assertEqual(r["reason"]["code"], "bad_signature")
        self.assertEqual((r["sessions"], r["head"], r["lines"]), (1, None, 1))
        self.assertEqual(r["key_ids"], [line["key_id"]])

    def test_cli(self):
        # SPEC 13.4: stdout lines and exit codes of `aegis verify`
        import contextlib
        import tempfile
        e = Emitter()
        e.append("open")
        e.append("intent", call_id="c9")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.aarl")
            with open(path, "wb") as f:
                f.write(e.bytes())

            def run(*args):
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = av.main(list(args))
                return code, out.getvalue()
            code, out = run(path)
            self.assertEqual(code, 3)
            self.assertEqual(out, (
                "Indeterminate: session 0 has no close record and nothing anchors beyond "
                "it; 1 call(s) in flight\nkey_id %s\ncoverage session 0 seq 0\n"
                "in_flight c9\n" % e.key_id))
            self.assertEqual(run("--key", e.pk.hex().upper(), path), (1, ""))
            self.assertEqual(run("--bogus", path), (1, ""))
            self.assertEqual(run(os.path.join(d, "missing.aarl")), (2, ""))
            store = os.path.join(d, "trust.txt")
            with open(store, "w") as f:
                f.write("# keys\n\n  %s \r\n" % e.pk.hex())
            self.assertEqual(run("--trust-store", store, path)[0], 3)
            with open(store, "w") as f:
                f.write("")
            code, out = run("--trust-store", store, path)
            self.assertEqual(code, 1)
            self.assertTrue(out.startswith("Tampered: session opened at session 0 seq 0"))
            with open(store, "w") as f:
                f.write("%s\nnot a key\n" % e.pk.hex())
            self.assertEqual(run("--trust-store", store, path), (1, ""))

    def test_public_key_uppercase_is_refused(self):
        e = Emitter()
        e.append("open", public_key=e.pk.hex().upper())
        r = e.verify()
        self.assertEqual(r["reason"]["detail"], "open line carries no public key")

    def test_open_not_genesis(self):
        e = Emitter()
        e.append("open")
        line = av.parse_row(e.rows[0])
        line["prev_hash"] = "1" * 64
        e.rows[0] = av.canonicalize(line)
        self.assertEqual(e.verify()["reason"]["detail"],
                         "open line does not anchor on the genesis digest")

    def test_chain_not_beginning_with_open(self):
        e = session(Emitter())
        e.rows = e.rows[1:]
        self.assertEqual(e.verify()["reason"]["detail"],
                         "chain does not begin with an open line")

    def test_duplicate_keys_last_wins_changes_hash_input(self):
        # SPEC 3.3: the last value wins; the verifier hashes the canonical form
        e = session(Emitter())
        row = e.rows[3]
        e.rows[3] = row[:-1] + b',"seq":0,"seq":3}'
        self.assertEqual(e.verify()["verdict"], "verified")


class Reader(unittest.TestCase):
    def bad(self, text):
        with self.assertRaises(av.JsonSyntaxError):
            av.parse_row(text)

    def test_depth(self):
        av.parse_row("[" * 127 + "]" * 127)
        self.bad("[" * 128 + "]" * 128)
        av.parse_row('{"a":' * 126 + "[]" + "}" * 126)

    def test_refusals(self):
        for t in ("", " ", "01", "-", "1.", "1e", ".5", "+1", "NaN", "Infinity", "-Infinity",
                  "[1,]", '{"a":1,}', "{'a':1}", '{"a":1}//', '"\\x"', '"\\ud800"',
                  '"\\udc00"', '"\\ud800\\u0041"', '"a\tb"', "1e400", "-1e400",
                  "\ufeff{}", "{} {}", "tru", "True", '"\\u12"', "[1 2]", '{"a" 1}',
                  '{1:2}', "\u00a0{}"):
            self.bad(t)

    def test_accepts(self):
        self.assertEqual(av.parse_row(' \t\r\n{"a":[]}\r '), {"a": []})
        self.assertEqual(av.parse_row('"\\ud83d\\ude02"'), "\U0001F602")
        self.assertIsInstance(av.parse_row("1e-400"), av.Float)
        self.assertIsInstance(av.parse_row("-0"), av.Float)
        self.assertEqual(av.parse_row("-1"), -1)
        with self.assertRaises(av.JsonSyntaxError):
            av.parse_row(b"\xff")

    def test_number_classes(self):
        # SPEC 3.3: by how the literal is written, as serde_json reads it
        def cls(t):
            try:
                v = av.parse_row('{"a":%s}' % t)
            except av.JsonSyntaxError:
                return "not_json"
            try:
                av.canonicalize(v)
                return "ok"
            except av.ValueSpaceFault as f:
                return f.code
        edge = 2 ** 1024 - 2 ** 970
        for t, want in (("18446744073709551615", "integer_too_large"),
                        ("18446744073709551616", "float_not_allowed"),
                        ("9007199254740991", "ok"), ("9007199254740992", "integer_too_large"),
                        ("-9007199254740993", "negative_integer"),
                        ("-9223372036854775808", "negative_integer"),
                        ("-9223372036854775809", "float_not_allowed"),
                        ("-0", "float_not_allowed"), ("0e0", "float_not_allowed"),
                        ("1e-400", "float_not_allowed"), ("1e400", "not_json"),
                        ("1.7976931348623158e308", "float_not_allowed"),
                        ("1.7976931348623159e308", "not_json"),
                        (str(edge - 1), "float_not_allowed"), (str(edge), "not_json"),
                        (str(-edge + 1), "float_not_allowed"), (str(-edge), "not_json")):
            self.assertEqual(cls(t), want, t)
        with self.assertRaises(av.JsonSyntaxError) as cm:
            av.parse_row(b'{"a":"\xff"}')
        self.assertEqual(cm.exception.message, "stream did not contain valid UTF-8")

    def test_fault_order_and_paths(self):
        def fault(t):
            with self.assertRaises(av.ValueSpaceFault) as cm:
                av.canonicalize(av.parse_row(t))
            return cm.exception.code, cm.exception.path
        self.assertEqual(fault('{"b":[null],"a":{"z":1,"y":-1}}'),
                         ("negative_integer", "$.a.y"))
        self.assertEqual(fault('[1,[2,[3.0]]]'), ("float_not_allowed", "$[1][1][0]"))
        self.assertEqual(fault('{"\\ue000":null,"\\ud800\\udc00":null}'),
                         ("null_not_allowed", "$.\U00010000"))
        self.assertEqual(fault("9007199254740992")[0], "integer_too_large")


class Ed25519(unittest.TestCase):
    def test_fourteen(self):
        self.assertEqual(len(av.small_order_encodings()), 14)

    @unittest.skipIf(nb is None, "PyNaCl not installed")
    def test_random_signatures_agree_between_paths(self):
        for i in range(20):
            pk, sk = nb.crypto_sign_seed_keypair(hashlib.sha256(b"%d" % i).digest())
            msg = os.urandom(i * 7)
            sig = nb.crypto_sign(msg, sk)[:64]
            self.assertEqual(av.verify_strict(pk, sig, msg, pure=True), (True, None))
            self.assertEqual(av.verify_strict(pk, sig, msg, pure=False), (True, None))
            bad = bytearray(sig)
            bad[i % 32] ^= 1
            self.assertFalse(av.verify_strict(pk, bytes(bad), msg, pure=True)[0])
            self.assertFalse(av.verify_strict(pk, sig, msg + b"x", pure=True)[0])


class Proofs(unittest.TestCase):
    """SPEC 19.3: an entry in the signed tree that is no Line is not_a_line, not an error."""

    def proof(self, extra: bytes) -> bytes:
        import base64
        import aegis_proof as ap
        pk, sk = seed_keypair(DEV_SEED)
        origin = "example.org/python"
        text = "%s\n1\n%s\n" % (origin, base64.b64encode(ap.leaf_hash(extra)).decode())
        blob = ap.key_id(origin, ap.ED25519, pk).to_bytes(4, "big") + sign_detached(text.encode(), sk)
        note = text + "\n\u2014 %s %s\n" % (origin, base64.b64encode(blob).decode())
        return ("c2sp.org/tlog-proof@v1\nextra %s\nindex 0\n\n" % base64.b64encode(extra).decode()).encode() + note.encode(), pk

    def result(self, extra: bytes) -> str:
        import aegis_proof as ap
        data, pk = self.proof(extra)
        return ap.check_proof(data, [pk.hex()], [], 0)["result"]

    def test_entry_without_canonical_form_or_not_utf8_is_not_a_line(self):
        pk, _ = seed_keypair(DEV_SEED)
        signed_float = b'{"key_id":"%s","line_type":"close","seq":1.5,"signature":"%s"}' % (
            av.sha256_hex(pk).encode(), b"0" * 128)
        self.assertEqual(self.result(signed_float), "not_a_line")
        self.assertEqual(self.result(b'{"a":"\xff"}'), "not_a_line")
        self.assertEqual(self.result(b"[1]"), "not_a_line")
        self.assertEqual(self.result(b'{"line_type":"intent","seq":1}'), "included")


if __name__ == "__main__":
    unittest.main()
