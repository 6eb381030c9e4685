"""Checkpoints and proofs over an Agent Action Record (SPEC.md section 19), written from the
SPEC alone: the RFC 6962 tree of a record's Lines, C2SP signed notes and checkpoints,
tlog-proof files, cosignature/v1, and a record held to checkpoints.

Standard library only; Ed25519 and the record walk come from aegis_verify."""

import base64
import binascii
import hashlib
import re

import aegis_verify as av

MAX_NOTE_BYTES = 1 << 20
MAX_SIGNATURES = 256
DASH = "\u2014 "
ED25519, COSIGNATURE_V1 = 0x01, 0x04


# RFC 6962 / RFC 9162 section 2.1 ---------------------------------------------------------
def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


class Tree:
    """Roots of the perfect subtrees so far (SPEC 19.1): O(log n) memory."""

    def __init__(self):
        self.stack = []  # [(hash, size)], largest first
        self.size = 0

    def add(self, leaf: bytes):
        node = (leaf, 1)
        while self.stack and self.stack[-1][1] == node[1]:
            top = self.stack.pop()
            node = (node_hash(top[0], node[0]), top[1] * 2)
        self.stack.append(node)
        self.size += 1

    def root(self) -> bytes:
        if not self.stack:
            return hashlib.sha256(b"").digest()
        r = self.stack[-1][0]
        for h, _ in reversed(self.stack[:-1]):
            r = node_hash(h, r)
        return r


def verify_inclusion(leaf: bytes, index: int, size: int, proof, root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2."""
    if index < 0 or index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


# C2SP signed notes (SPEC 19.2) ----------------------------------------------------------
class NoteError(Exception):
    pass


def b64(text: str) -> bytes:
    """Canonical standard base64, or NoteError."""
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text) or len(text) % 4:
        raise NoteError("not base64")
    try:
        data = base64.b64decode(text, validate=True)
    except binascii.Error:
        raise NoteError("not base64")
    if base64.b64encode(data).decode() != text:
        raise NoteError("not canonical base64")
    return data


def key_name_ok(name: str) -> bool:
    """SPEC 19.2: non-empty, no `+`, no White_Space character (the list of SPEC 1.1)."""
    return name != "" and "+" not in name and not any(c in av.WHITE_SPACE for c in name)


def parse_note(data: bytes):
    """(text, [(name, key_id, signature bytes)])."""
    if len(data) > MAX_NOTE_BYTES:
        raise NoteError("too large")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteError("not UTF-8")
    if any(ord(c) < 0x20 and c != "\n" for c in text):
        raise NoteError("control character")
    split = text.rfind("\n\n")
    if split < 0 or not text.endswith("\n"):
        raise NoteError("no signatures")
    lines = text[split + 2:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise NoteError("too many signatures")
    sigs = []
    for line in lines:
        if not line.startswith(DASH):
            raise NoteError("bad signature line")
        rest = line[len(DASH):]
        space = rest.rfind(" ")
        if space < 0 or not key_name_ok(rest[:space]):
            raise NoteError("bad signature line")
        blob = b64(rest[space + 1:])
        if len(blob) < 5:
            raise NoteError("short signature")
        sigs.append((rest[:space], int.from_bytes(blob[:4], "big"), blob[4:]))
    return text[:split + 1], sigs


def parse_checkpoint_text(text: str):
    """(origin, size, root) of a checkpoint's note text."""
    lines = text[:-1].split("\n")
    if len(lines) < 3 or lines[0] == "":
        raise NoteError("not a checkpoint")
    if not re.fullmatch(r"0|[1-9][0-9]*", lines[1]) or int(lines[1]) > 2 ** 53 - 1:
        raise NoteError("not a checkpoint")
    root = b64(lines[2])
    if len(root) != 32 or any(x == "" for x in lines[3:]):
        raise NoteError("not a checkpoint")
    return lines[0], int(lines[1]), root


def key_id(name: str, sig_type: int, public_key: bytes) -> int:
    return int.from_bytes(hashlib.sha256(name.encode() + bytes([0x0A, sig_type]) + public_key).digest()[:4], "big")


def parse_vkey(text: str):
    """(name, type, public key) of a verifier key `<name>+<8 hex>+<base64(type || key)>`."""
    name, _, rest = text.strip().partition("+")
    kid, _, blob = rest.partition("+")
    if not key_name_ok(name) or not re.fullmatch(r"[0-9a-f]{8}", kid):
        raise NoteError("bad vkey")
    raw = b64(blob)
    if len(raw) != 33 or raw[0] not in (ED25519, COSIGNATURE_V1):
        raise NoteError("bad vkey")
    if key_id(name, raw[0], raw[1:]) != int(kid, 16):
        raise NoteError("vkey key ID mismatch")
    return name, raw[0], raw[1:]


def ed25519_ok(public_key: bytes, signature: bytes, message: bytes) -> bool:
    return av.verify_strict(public_key, signature, message)[0]


def open_checkpoint(data: bytes, public_keys, witnesses=()):
    """("opened", (origin, size, root), signer key, [witness names]) or (code,).

    A witness is its public key (SPEC 19.3): every cosignature line by a given key is checked,
    and the key is named once, however many lines it signed or names it was given under:
    in the order the witness keys were given, by the first name given for it."""
    try:
        text, sigs = parse_note(data)
        origin, size, root = parse_checkpoint_text(text)
    except NoteError:
        return ("malformed",)
    logs = {key_id(origin, ED25519, k): k for k in public_keys}
    signer, cosigned, counted = None, [], set()
    for name, kid, sig in sigs:
        if name == origin and kid in logs:
            if not ed25519_ok(logs[kid], sig, text.encode()):
                return ("bad_signature",)
            signer = signer or logs[kid]
            continue
        for wname, _, wkey in witnesses:
            if wname == name and key_id(wname, COSIGNATURE_V1, wkey) == kid:
                t = int.from_bytes(sig[:8], "big") if len(sig) == 72 else None
                message = ("cosignature/v1\ntime %d\n" % t).encode() + text.encode() if t is not None else b""
                if t is None or t >= 2 ** 63 or not ed25519_ok(wkey, sig[8:], message):
                    return ("bad_signature",)
                counted.add(wkey)
                break
    if signer is None:
        return ("unsigned",)
    named = set()
    for wname, _, wkey in witnesses:
        if wkey in counted and wkey not in named:
            named.add(wkey)
            cosigned.append(wname)
    return ("opened", (origin, size, root), signer, cosigned)


# tlog-proof (SPEC 19.3) ----------------------------------------------------------------
def parse_proof(data: bytes):
    """(extra or None, index, [hashes], checkpoint bytes), by the grammar of SPEC 19.3."""
    if len(data) > 2 * MAX_NOTE_BYTES:
        raise NoteError("too large")
    lines, at = [], 0
    def line():
        nonlocal at
        end = data.find(b"\n", at)
        if end < 0:
            raise NoteError("no checkpoint")
        out = data[at:end].decode("latin-1")
        at = end + 1
        return out
    if line() != "c2sp.org/tlog-proof@v1":
        raise NoteError("bad header")
    cur, extra = line(), None
    if cur.startswith("extra "):
        extra = b64(cur[6:])
        cur = line()
    if not cur.startswith("index ") or not re.fullmatch(r"0|[1-9][0-9]*", cur[6:]) or int(cur[6:]) > 2 ** 53 - 1:
        raise NoteError("bad index")
    index, hashes = int(cur[6:]), []
    cur = line()
    while cur != "":
        h = b64(cur)
        if len(h) != 32 or len(hashes) == 64:
            raise NoteError("bad hash")
        hashes.append(h)
        cur = line()
    if at >= len(data):
        raise NoteError("no checkpoint")
    return extra, index, hashes, data[at:]


def check_proof(data: bytes, keys, witnesses, min_witnesses: int) -> dict:
    """The vector kind `proof`'s answer (SPEC 11.4, 19.3)."""
    none = {"index": None, "size": None, "line_signature": None, "cosigned": []}
    try:
        extra, index, hashes, checkpoint = parse_proof(data)
    except NoteError:
        return dict(none, result="malformed")
    opened = open_checkpoint(checkpoint, [bytes.fromhex(k) for k in keys], [parse_vkey(w) for w in witnesses])
    if opened[0] != "opened":
        return dict(none, result="checkpoint_refused:" + opened[0])
    (_origin, size, root), signer, cosigned = opened[1], opened[2], opened[3]
    if extra is None:
        return dict(none, result="no_entry")
    if index >= size:
        return dict(none, result="index_out_of_range")
    if not verify_inclusion(leaf_hash(extra), index, size, hashes, root):
        return dict(none, result="not_included")
    # Read as a row is read (SPEC 3.3), and a Line has a canonical form (3.2): else not_a_line.
    try:
        line = av.parse_row(extra)
        av.canonicalize(line)
    except (av.JsonSyntaxError, av.ValueSpaceFault):
        return dict(none, result="not_a_line")
    if not isinstance(line, dict):
        return dict(none, result="not_a_line")
    signed = "unsigned"
    if "signature" in line:
        unsigned = {k: v for k, v in line.items() if k != "signature"}
        ok = (av.is_signature_hex(line.get("signature")) and line.get("key_id") == av.sha256_hex(signer)
              and ed25519_ok(signer, bytes.fromhex(line["signature"]), av.canonicalize(unsigned)))
        if not ok:
            return dict(none, result="bad_line_signature")
        signed = "signed"
    return {"result": "too_few_witnesses" if len(cosigned) < min_witnesses else "included",
            "index": index, "size": size, "line_signature": signed, "cosigned": cosigned}


# A record held to checkpoints (SPEC 19.4) -----------------------------------------------
REASON_TEXT = {
    "truncated": "checkpoint {checkpoint} of {origin} vouches for {size} lines, but only {lines} verify; the record was cut short",
    "checkpoint_mismatch": "the first {size} lines hash to root {found}, not the root {expected} that checkpoint {checkpoint} of {origin} states",
    "checkpoint_unsigned": "checkpoint {checkpoint} of {origin} is not signed by the key of the session holding line {size}",
    "inconsistent_checkpoints": "checkpoints {first} and {second} of {origin} state different roots for {size} lines; the record forked",
}


def held(path: str, checkpoints, trust, witnesses=None, min_witnesses=0) -> dict:
    """The vector kind `checkpointed`'s answer: checkpoints is [(label, bytes)]; witnesses
    are vkeys whose cosignatures count (None: none given), min_witnesses how many must have
    cosigned each checkpoint (SPEC 19.4)."""
    given = None if witnesses is None else [parse_vkey(w) for w in witnesses]
    stated = []
    for label, data in checkpoints:
        text, _ = parse_note(data)
        stated.append((label, data) + parse_checkpoint_text(text))
    sizes = {s[3] for s in stated}
    tree, at_size, key = Tree(), {}, [None]
    def on_line(canon, value):
        if value.get("line_type") == "open" and isinstance(value.get("public_key"), str):
            key[0] = value["public_key"]
        tree.add(leaf_hash(canon))
        if tree.size in sizes:
            at_size[tree.size] = (tree.root(), key[0])
    r = av.verify(path, trust, on_line=on_line)
    findings, cosigned = [], []
    for label, data, origin, size, root in stated:
        cosigned.append([])
        if r["verdict"] == "tampered":
            findings.append("not_reached")
        elif size == 0 or size not in at_size:
            findings.append("unsigned" if size == 0 else "truncated")
        else:
            got_root, k = at_size[size]
            if k is None or (trust is not None and k not in trust):
                findings.append("unsigned")
                continue
            opened = open_checkpoint(data, [bytes.fromhex(k)], given or ())
            findings.append("unsigned" if opened[0] != "opened" else ("matches" if opened[1][2] == got_root else "mismatch"))
            if opened[0] == "opened":
                cosigned[-1] = opened[3]
    r = dict(r, findings=findings, anchored=None)
    if given is not None:
        r["cosigned"] = cosigned
    if r["verdict"] == "tampered":
        return r
    reason = None
    signed = [s for s, f in zip(stated, findings) if f in ("matches", "mismatch")]
    for i, a in enumerate(signed):
        for b in signed[i + 1:]:
            if reason is None and a[2] == b[2] and a[3] == b[3] and a[4] != b[4]:
                reason = {"code": "inconsistent_checkpoints", "origin": a[2], "size": a[3], "first": a[0], "second": b[0]}
    for code in ("truncated", "unsigned", "mismatch"):
        if reason is not None:
            break
        for s, f in zip(stated, findings):
            if f != code:
                continue
            label, _, origin, size, root = s
            if code == "truncated":
                # The Lines the walk accepted (the tree's leaves), not the rows it read (SPEC 19.4).
                reason = {"code": "truncated", "checkpoint": label, "origin": origin, "size": size, "lines": tree.size}
            elif code == "unsigned":
                reason = {"code": "checkpoint_unsigned", "checkpoint": label, "origin": origin, "size": size}
            else:
                reason = {"code": "checkpoint_mismatch", "checkpoint": label, "origin": origin, "size": size,
                          "expected": base64.b64encode(root).decode(), "found": base64.b64encode(at_size[size][0]).decode()}
            break
    if reason is not None:
        return dict(r, verdict="tampered", reason=reason, text="Tampered: " + REASON_TEXT[reason["code"]].format(**reason),
                    trust_label="unpinned", exit_code=1)
    for s, c in zip(stated, cosigned):
        if len(c) < min_witnesses:
            reason = {"code": "too_few_witnesses", "checkpoint": s[0], "origin": s[2], "size": s[3], "cosigned": len(c), "required": min_witnesses}
            text = "Indeterminate: checkpoint {checkpoint} of {origin} ({size} lines) is cosigned by {cosigned} of the {required} witnesses required"
            return dict(r, verdict="indeterminate", reason=reason, text=text.format(**reason), trust_label="unpinned", exit_code=3)
    whole = [s for s, f in zip(stated, findings) if f == "matches" and s[3] == tree.size]
    if whole and r["verdict"] == "indeterminate" and r["reason"]["code"] == "unanchored_tail":
        pinned = trust is not None
        text = "Verified (unpinned)" if not pinned else ("Verified (pinned to %s)" % r["key_ids"][0] if len(r["key_ids"]) == 1 else "Verified (pinned)")
        return dict(r, verdict="verified", reason=None, text=text, trust_label="pinned" if pinned else "unpinned",
                    exit_code=0, anchored={"size": whole[0][3], "in_flight": r["reason"]["in_flight"]})
    return r
