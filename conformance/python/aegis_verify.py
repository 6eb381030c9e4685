#!/usr/bin/python3
"""Independent verifier for Agent Action Record chains, schema version 2.

Written from SPEC.md (and RFC 8032 / RFC 8785 for the primitives it cites) alone.
Standard library only, plus PyNaCl (libsodium) as an optional speed path for the
final Ed25519 equation; every strict check of SPEC section 8.5 is done here in Python.

Module use:

    from aegis_verify import verify
    result = verify("file.aarl", trust=None)          # or trust=["<64-hex>", ...]
    result["verdict"], result["reason"], result["text"], ...

CLI:

    /usr/bin/python3 aegis_verify.py [--key HEX]... [--trust-store PATH] [--json]
        [--pure-python] FILE
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import json
import os
import re
import sys

__all__ = [
    "verify", "parse_row", "canonicalize", "JsonSyntaxError", "ValueSpaceFault",
    "verify_strict", "ROW_LIMIT", "EXIT_CODES",
]

SCHEMA_VERSION = 2
ROW_LIMIT = 1_048_576          # SPEC 13.1 (aegis-ts extension)
MAX_DEPTH = 127                # SPEC 3.3
MAX_SAFE_INTEGER = 2 ** 53 - 1  # SPEC 3.2
GENESIS = "0" * 64
MAX_LISTED_UNFINISHED = 100     # SPEC 13.4: unfinished_calls lists at most this many
MAX_WAITING_CALLS = 100_000     # SPEC 18: call_ids waiting for an outcome at once
MAX_WAITING_UNITS = 32 * 1024 * 1024  # SPEC 18: UTF-16 code units of those call_ids


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


# Exit codes of `aegis verify` (SPEC 13.4): a usage error shares 1 with Tampered; 2 is
# "could not read"; 3 is Indeterminate.
EXIT_CODES = {"verified": 0, "tampered": 1, "usage": 1, "unreadable": 2, "indeterminate": 3}
I64_MIN = -(2 ** 63)           # SPEC 3.3: a negative literal below this is a float
U64_MAX = 2 ** 64 - 1          # SPEC 3.3: an unsigned literal above this is a float

# SPEC 1.1: Unicode White_Space.
WHITE_SPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)

_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_HEX128 = re.compile(r"[0-9a-f]{128}\Z")


def is_digest(v) -> bool:
    """SPEC 2: 64 lowercase hex characters (uppercase is refused, never normalized)."""
    return type(v) is str and _HEX64.match(v) is not None


def is_signature_hex(v) -> bool:
    return type(v) is str and _HEX128.match(v) is not None


def is_integer(v) -> bool:
    """SPEC 2: an integer of the value space (non-negative, below 2^53, not a bool)."""
    return type(v) is int and 0 <= v <= MAX_SAFE_INTEGER


# ---------------------------------------------------------------------------------------
# SPEC 3.3: the strict row reader
# ---------------------------------------------------------------------------------------

class Float:
    """A JSON number serde_json reads as a float (SPEC 3.3: judged by how it is written):
    a fraction or an exponent, `-0`, a negative integer literal below -2^63, or an
    unsigned one above 2^64 - 1. Only the text is kept: floats are outside the value
    space."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return "Float(%s)" % self.text

    def __eq__(self, other):
        return isinstance(other, Float) and other.text == self.text

    def __hash__(self):
        return hash(self.text)


class JsonSyntaxError(Exception):
    """A row that does not parse. `message` follows serde_json's wording (informative,
    SPEC 8.3): '<what> at line <l> column <c>', column in bytes."""

    def __init__(self, what: str, line=None, column=None):
        self.what, self.line, self.column = what, line, column
        super().__init__(what if line is None else
                         "%s at line %d column %d" % (what, line, column))

    @property
    def message(self) -> str:
        return str(self)


_JSON_WS = " \t\n\r"
_PLAIN_RUN = re.compile(r'[^"\\\x00-\x1f]+')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n",
            "r": "\r", "t": "\t"}


class _Parser:
    """Recursive descent over one decoded row. Semantics are SPEC 3.3's; error words and
    positions imitate serde_json (peek errors point at the offending character, others
    at the last character consumed)."""

    def __init__(self, text: str):
        self.s = text
        self.n = len(text)
        self.depth = 0

    # position helpers ---------------------------------------------------------------
    def _pos(self, index: int):
        """serde_json-like (line, column): column counts bytes since the last \\n."""
        index = min(index, self.n)
        prefix = self.s[:index]
        nl = prefix.rfind("\n")
        line = prefix.count("\n") + 1
        col = len(prefix[nl + 1:].encode("utf-8", "surrogatepass"))
        return line, col

    def err(self, what: str, index: int):
        """Error positioned after `index` characters have been consumed."""
        line, col = self._pos(index)
        raise JsonSyntaxError(what, line, col)

    def peek_err(self, what: str, index: int):
        """Error positioned at the character at `index` (serde_json peek_error)."""
        line, col = self._pos(index)
        if index < self.n:
            col += 1
        raise JsonSyntaxError(what, line, col)

    def skip_ws(self, i: int) -> int:
        s, n = self.s, self.n
        while i < n and s[i] in _JSON_WS:
            i += 1
        return i

    # grammar -------------------------------------------------------------------------
    def parse(self):
        i = self.skip_ws(0)
        value, i = self.value(i)
        i = self.skip_ws(i)
        if i < self.n:
            self.peek_err("trailing characters", i)
        return value

    def value(self, i: int):
        s = self.s
        if i >= self.n:
            self.err("EOF while parsing a value", i)
        c = s[i]
        if c == "{":
            return self.obj(i)
        if c == "[":
            return self.arr(i)
        if c == '"':
            return self.string(i)
        if c == "-" or "0" <= c <= "9":
            return self.number(i)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if c == word[0]:
                for k, ch in enumerate(word):
                    j = i + k
                    if j >= self.n:
                        self.err("EOF while parsing a value", j)
                    if s[j] != ch:
                        self.err("expected ident", j + 1)
                return val, i + len(word)
        self.peek_err("expected value", i)

    def _enter(self, i: int):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.err("recursion limit exceeded", i + 1)

    def obj(self, i: int):
        self._enter(i)
        s = self.s
        out = {}
        i = self.skip_ws(i + 1)
        if i < self.n and s[i] == "}":
            self.depth -= 1
            return out, i + 1
        while True:
            if i >= self.n:
                self.err("EOF while parsing an object", i)
            if s[i] != '"':
                self.peek_err("key must be a string", i)
            key, i = self.string(i)
            i = self.skip_ws(i)
            if i >= self.n:
                self.err("EOF while parsing an object", i)
            if s[i] != ":":
                self.peek_err("expected `:`", i)
            i = self.skip_ws(i + 1)
            val, i = self.value(i)
            out[key] = val            # SPEC 3.3: a repeated key takes the last value
            i = self.skip_ws(i)
            if i >= self.n:
                self.err("EOF while parsing an object", i)
            c = s[i]
            if c == "}":
                self.depth -= 1
                return out, i + 1
            if c != ",":
                self.peek_err("expected `,` or `}`", i)
            i = self.skip_ws(i + 1)
            if i < self.n and s[i] == "}":
                self.peek_err("trailing comma", i)

    def arr(self, i: int):
        self._enter(i)
        s = self.s
        out = []
        i = self.skip_ws(i + 1)
        if i < self.n and s[i] == "]":
            self.depth -= 1
            return out, i + 1
        while True:
            val, i = self.value(i)
            out.append(val)
            i = self.skip_ws(i)
            if i >= self.n:
                self.err("EOF while parsing a list", i)
            c = s[i]
            if c == "]":
                self.depth -= 1
                return out, i + 1
            if c != ",":
                self.peek_err("expected `,` or `]`", i)
            i = self.skip_ws(i + 1)
            if i < self.n and s[i] == "]":
                self.peek_err("trailing comma", i)

    def string(self, i: int):
        s, n = self.s, self.n
        i += 1
        parts = []
        while True:
            m = _PLAIN_RUN.match(s, i)
            if m:
                parts.append(m.group())
                i = m.end()
            if i >= n:
                self.err("EOF while parsing a string", i)
            c = s[i]
            if c == '"':
                return "".join(parts), i + 1
            if c != "\\":
                self.err("control character (\\u0000-\\u001F) found while parsing a string",
                         i + 1)
            # escape
            i += 1
            if i >= n:
                self.err("EOF while parsing a string", i)
            e = s[i]
            if e in _ESCAPES:
                parts.append(_ESCAPES[e])
                i += 1
                continue
            if e != "u":
                self.err("invalid escape", i + 1)
            cp, i = self.hex4(i + 1)
            if 0xDC00 <= cp <= 0xDFFF:
                self.err("lone leading surrogate in hex escape", i)
            if 0xD800 <= cp <= 0xDBFF:
                # must be immediately followed by a \u escape of a low surrogate
                if i >= n:
                    self.err("EOF while parsing a string", i)
                if s[i] != "\\":
                    self.err("unexpected end of hex escape", i + 1)
                if i + 1 >= n:
                    self.err("EOF while parsing a string", i + 1)
                if s[i + 1] != "u":
                    self.err("unexpected end of hex escape", i + 2)
                lo, i2 = self.hex4(i + 2)
                if not 0xDC00 <= lo <= 0xDFFF:
                    self.err("lone leading surrogate in hex escape", i2)
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                i = i2
            parts.append(chr(cp))

    def hex4(self, i: int):
        s = self.s
        if i + 4 > self.n:
            # serde: EOF while parsing a string
            m = re.compile(r"[0-9a-fA-F]*").match(s, i)
            if m.end() < self.n:
                self.err("invalid escape", m.end() + 1)
            self.err("EOF while parsing a string", self.n)
        m = _HEX4.match(s, i)
        if not m:
            j = i
            while s[j] in "0123456789abcdefABCDEF":
                j += 1
            self.err("invalid escape", j + 1)
        return int(s[i:i + 4], 16), i + 4

    def number(self, i: int):
        s = self.s
        m = _NUMBER.match(s, i)
        if not m:
            # '-' not followed by a digit
            if i + 1 >= self.n:
                self.err("EOF while parsing a value", i + 1)
            self.peek_err("invalid number", i + 1)
        j = m.end()
        # serde_json: a leading zero followed by a digit is an invalid number; '1.' or
        # '1e' with no digits likewise.
        if j < self.n:
            c = s[j]
            if c in "0123456789":
                self.peek_err("invalid number", j)
            if c == "." and m.group(1) is None and m.group(2) is None:
                if j + 1 >= self.n:
                    self.err("EOF while parsing a value", j + 1)
                self.peek_err("invalid number", j + 1)
            if c in "eE" and m.group(2) is None:
                k = j + 1
                if k < self.n and s[k] in "+-":
                    k += 1
                if k >= self.n:
                    self.err("EOF while parsing a value", k)
                self.peek_err("invalid number", k)
        text = m.group()
        # SPEC 3.3: a number whose magnitude overflows a double is refused.
        try:
            mag = float(text)
        except OverflowError:  # pragma: no cover - float() of a str returns inf
            mag = float("inf")
        if mag in (float("inf"), float("-inf")):
            self.err("number out of range", j)
        # SPEC 3.3: classes by how the literal is written, as serde_json reads them.
        if m.group(1) is not None or m.group(2) is not None or text == "-0":
            return Float(text), j
        value = int(text)
        if value < I64_MIN or value > U64_MAX:
            return Float(text), j
        return value, j


def decode_row(row: bytes) -> str:
    """SPEC 3.3: the row must be valid UTF-8. Raises JsonSyntaxError otherwise."""
    try:
        return row.decode("utf-8", "strict")
    except UnicodeDecodeError:
        # SPEC 3.3: aegis-ts's message (the reference's words for a file that is not UTF-8)
        raise JsonSyntaxError("stream did not contain valid UTF-8") from None


def parse_row(row) -> object:
    """Parse one row (bytes or str) by SPEC 3.3. Raises JsonSyntaxError."""
    text = decode_row(row) if isinstance(row, (bytes, bytearray)) else row
    return _Parser(text).parse()


def is_blank(text: str) -> bool:
    """SPEC 1.1: only Unicode White_Space, or nothing."""
    return text.strip(WHITE_SPACE) == ""


# ---------------------------------------------------------------------------------------
# SPEC 3.1 / 3.2: canonical form (RFC 8785 over the restricted value space)
# ---------------------------------------------------------------------------------------

class ValueSpaceFault(Exception):
    def __init__(self, code: str, path: str, text: str):
        self.code, self.path, self.text = code, path, text
        super().__init__(text)


def _utf16_key(k: str) -> bytes:
    return k.encode("utf-16-be", "surrogatepass")


_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
          "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def _esc(m):
    c = m.group()
    return _SHORT.get(c) or "\\u%04x" % ord(c)


def _str(s: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_esc, s) + '"'


def _canon(v, path: str, out: list):
    t = type(v)
    if t is str:
        out.append(_str(v))
    elif t is dict:
        out.append("{")
        first = True
        for k in sorted(v, key=_utf16_key):
            if not first:
                out.append(",")
            first = False
            out.append(_str(k))
            out.append(":")
            _canon(v[k], path + "." + k, out)
        out.append("}")
    elif t is list:
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _canon(x, "%s[%d]" % (path, i), out)
        out.append("]")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif t is int:
        if v < 0:
            raise ValueSpaceFault(
                "negative_integer", path,
                "negative integer at %s is outside the JCS value space" % path)
        if v > MAX_SAFE_INTEGER:
            raise ValueSpaceFault(
                "integer_too_large", path,
                "integer %d at %s is at or above 2^53 (max 9007199254740991)" % (v, path))
        out.append(str(v))
    elif t is Float:
        raise ValueSpaceFault(
            "float_not_allowed", path,
            "floating-point value at %s is outside the JCS value space" % path)
    elif v is None:
        raise ValueSpaceFault(
            "null_not_allowed", path,
            "null at %s; absent fields must be omitted, never null" % path)
    else:  # pragma: no cover
        raise TypeError("not a JSON value: %r" % (v,))


def canonicalize(value) -> bytes:
    """The canonical form (SPEC 3.1) as UTF-8 bytes. Raises ValueSpaceFault (SPEC 3.2)
    naming the first out-of-space value in canonical order."""
    out: list = []
    _canon(value, "$", out)
    return "".join(out).encode("utf-8")


def sha256_hex(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


# ---------------------------------------------------------------------------------------
# SPEC 8.5: strict Ed25519 (ed25519-dalek verify_strict), curve arithmetic per RFC 8032
# ---------------------------------------------------------------------------------------

P = 2 ** 255 - 19
L = 2 ** 252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)
IDENTITY = (0, 1, 1, 0)


def _recover_x(y: int, sign: int):
    """x for y (already reduced mod p), or None when there is no point (RFC 8032 5.1.3
    step 2-3, one exponentiation). Like dalek, x = 0 with the sign bit set is accepted
    (x stays 0)."""
    u = (y * y - 1) % P
    v = (D * y * y + 1) % P
    v3 = v * v % P * v % P
    x = u * v3 % P * pow(u * v3 % P * v3 % P * v % P, (P - 5) // 8, P) % P
    vx2 = v * x % P * x % P
    if vx2 != u:
        if vx2 == (-u) % P:
            x = x * SQRT_M1 % P
        else:
            return None
    if x == 0:
        return 0
    if (x & 1) != sign:
        x = P - x
    return x


def point_decode(b: bytes):
    """SPEC 8.5: the 255 low bits read as y modulo p; sign bit picks x; x = 0 with the
    sign bit set is accepted. Returns extended coordinates or None."""
    if len(b) != 32:
        return None
    n = int.from_bytes(b, "little")
    sign = n >> 255
    y = (n & ((1 << 255) - 1)) % P
    x = _recover_x(y, sign)
    if x is None:
        return None
    return (x, y, 1, x * y % P)


def point_encode(pt) -> bytes:
    X, Y, Z, _ = pt
    zi = pow(Z, P - 2, P)
    x, y = X * zi % P, Y * zi % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def point_add(p1, p2):
    """RFC 8032 5.1.4 addition (complete for a = -1, usable for doubling)."""
    X1, Y1, Z1, T1 = p1
    X2, Y2, Z2, T2 = p2
    A = (Y1 - X1) * (Y2 - X2) % P
    B = (Y1 + X1) * (Y2 + X2) % P
    C = 2 * T1 * T2 * D % P
    Dd = 2 * Z1 * Z2 % P
    E, F, G, H = B - A, Dd - C, Dd + C, B + A
    return (E * F % P, G * H % P, F * G % P, E * H % P)


def point_double(p1):
    X1, Y1, Z1, _ = p1
    A = X1 * X1 % P
    B = Y1 * Y1 % P
    C = 2 * Z1 * Z1 % P
    H = A + B
    E = H - (X1 + Y1) * (X1 + Y1)
    G = A - B
    F = C + G
    return (E * F % P, G * H % P, F * G % P, E * H % P)


def point_neg(p1):
    X, Y, Z, T = p1
    return ((-X) % P, Y, Z, (-T) % P)


def point_is_identity(p1) -> bool:
    X, Y, Z, _ = p1
    return X % P == 0 and (Y - Z) % P == 0


def point_equal(p1, p2) -> bool:
    X1, Y1, Z1, _ = p1
    X2, Y2, Z2, _ = p2
    return (X1 * Z2 - X2 * Z1) % P == 0 and (Y1 * Z2 - Y2 * Z1) % P == 0


def scalar_mult(k: int, pt):
    q = IDENTITY
    for bit in bin(k)[2:] if k > 0 else "":
        q = point_double(q)
        if bit == "1":
            q = point_add(q, pt)
    return q


def double_scalar_mult(a: int, p1, b: int, p2):
    """[a]p1 + [b]p2 (Straus/Shamir)."""
    p12 = point_add(p1, p2)
    q = IDENTITY
    for i in range(max(a.bit_length(), b.bit_length()) - 1, -1, -1):
        q = point_double(q)
        ba, bb = (a >> i) & 1, (b >> i) & 1
        if ba and bb:
            q = point_add(q, p12)
        elif ba:
            q = point_add(q, p1)
        elif bb:
            q = point_add(q, p2)
    return q


def is_small_order(pt) -> bool:
    """Order divides 8: [8]P is the identity."""
    return point_is_identity(point_double(point_double(point_double(pt))))


_BY = 4 * pow(5, P - 2, P) % P
BASE = (_recover_x(_BY, 0), _BY, 1, _recover_x(_BY, 0) * _BY % P)

try:  # optional speed path for step 4 only (see verify_strict)
    import nacl.bindings as _nacl
    import nacl.exceptions as _nacl_exc
    HAVE_NACL = True
except Exception:  # pragma: no cover
    HAVE_NACL = False

USE_NACL = HAVE_NACL and os.environ.get("AEGIS_PY_PURE") != "1"


@functools.lru_cache(maxsize=256)
def _public_key(public_key: bytes):
    """(point or None, small order?, canonical encoding?) for a public key; cached, as a
    file uses few keys."""
    A = point_decode(public_key)
    if A is None:
        return None, False, False
    canonical = (int.from_bytes(public_key, "little") & ((1 << 255) - 1)) < P
    return A, is_small_order(A), canonical


def verify_strict(public_key: bytes, signature: bytes, message: bytes, pure=None):
    """SPEC 8.5. Returns (ok, step) where step names the first failing step:
    'step1_s_not_canonical', 'step2_r_not_a_point', 'step2_r_small_order',
    'step3_a_not_a_point', 'step3_a_small_order', 'step4_equation', or None when valid.

    Steps 1-3 are always done here, in Python. Step 4 is the cofactorless equation
    encode([S]B - [k]A) == R; it is computed in Python, or, when PyNaCl is present,
    `pure` is false and A is a canonical encoding, by libsodium's verify, which (1.0.16+)
    computes exactly that equation once steps 1-3 have passed (libsodium refuses
    non-canonical A, which this rule accepts, so those always take the Python path)."""
    if pure is None or not HAVE_NACL:
        # Without libsodium the Python path is the only one.
        pure = not USE_NACL
    if len(signature) != 64 or len(public_key) != 32:
        return False, "length"
    Rb, Sb = signature[:32], signature[32:]
    S = int.from_bytes(Sb, "little")
    if S >= L:
        return False, "step1_s_not_canonical"
    R = point_decode(Rb)
    if R is None:
        return False, "step2_r_not_a_point"
    if is_small_order(R):
        return False, "step2_r_small_order"
    A, a_small, a_canonical = _public_key(bytes(public_key))
    if A is None:
        return False, "step3_a_not_a_point"
    if a_small:
        return False, "step3_a_small_order"
    if not pure and a_canonical:
        try:
            _nacl.crypto_sign_open(bytes(signature) + bytes(message), bytes(public_key))
            return True, None
        except _nacl_exc.BadSignatureError:
            return False, "step4_equation"
    k = int.from_bytes(hashlib.sha512(Rb + public_key + message).digest(), "little") % L
    check = double_scalar_mult(S, BASE, k, point_neg(A))
    if point_encode(check) == Rb:
        return True, None
    return False, "step4_equation"


def small_order_encodings():
    """Rebuild from the curve every 32-byte string that decodes (by the rule above) to a
    point of small order. SPEC 8.5 says there are exactly fourteen."""
    # Find a point of order 8: [L]Q for a point Q lies in the 8-torsion.
    torsion8 = None
    y = 2
    while torsion8 is None:
        Q = point_decode(y.to_bytes(32, "little"))
        y += 1
        if Q is None:
            continue
        T = scalar_mult(L, Q)
        if not is_small_order(T):  # pragma: no cover
            raise AssertionError("[L]Q outside the torsion subgroup")
        T4 = point_double(point_double(T))
        if not point_is_identity(T4):
            torsion8 = T
    points = [IDENTITY]
    for _ in range(7):
        points.append(point_add(points[-1], torsion8))
    encodings = set()
    for pt in points:
        enc = point_encode(pt)
        n = int.from_bytes(enc, "little")
        yv, sign = n & ((1 << 255) - 1), n >> 255
        xs_zero = _recover_x(yv, 0) == 0
        for yy in (yv, yv + P):
            if yy >= 2 ** 255:
                continue
            for s in ((0, 1) if xs_zero else (sign,)):
                cand = (yy | (s << 255)).to_bytes(32, "little")
                dec = point_decode(cand)
                if dec is not None and point_equal(dec, pt):
                    encodings.add(cand)
    return sorted(encodings)


# ---------------------------------------------------------------------------------------
# SPEC 1.1: rows, read as a stream
# ---------------------------------------------------------------------------------------

def _blank_bytes(row: bytes) -> bool:
    """SPEC 1.1: blank means valid UTF-8 holding only White_Space (or nothing)."""
    try:
        return is_blank(row.decode("utf-8", "strict"))
    except UnicodeDecodeError:
        return False


class RowReader:
    """Yields rows of a file one at a time with bounded memory (SPEC 1.1, 13.1)."""

    CHUNK = 1 << 16

    def __init__(self, f, limit: int = ROW_LIMIT):
        self.f = f
        self.limit = limit
        self.buf = b""
        self.pos = 0
        self.eof = False

    def _fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.f.read(self.CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def next_row(self):
        """Returns None at the end, ('row', bytes) for a row (one \\r before its \\n or
        before the end of the file removed), or ('too_long', None) for a non-blank row
        longer than the limit (the walk stops there). A blank row is returned like any
        other; a blank row longer than the limit is skipped here (SPEC 1.1, 13.1)."""
        while True:
            scan = self.pos
            while True:
                i = self.buf.find(b"\n", scan)
                if i >= 0:
                    row = self.buf[self.pos:i]
                    self.pos = i + 1
                    break
                if len(self.buf) - self.pos > self.limit + 1:
                    if self._skip_long_row():
                        row = None          # blank: on to the next row
                        break
                    self.eof = True
                    self.buf, self.pos = b"", 0
                    return ("too_long", None)
                scanned = len(self.buf) - self.pos     # relative to the row start
                if not self._fill():
                    if self.pos >= len(self.buf):
                        return None
                    row = self.buf[self.pos:]
                    self.buf, self.pos = b"", 0
                    break
                scan = self.pos + scanned
            if row is None:
                continue
            if row.endswith(b"\r"):
                row = row[:-1]
            if len(row) > self.limit:
                if _blank_bytes(row):
                    continue
                self.eof = True
                self.buf, self.pos = b"", 0
                return ("too_long", None)
            return ("row", row)

    def _skip_long_row(self) -> bool:
        """Consume the rest of an over-long row (through its \\n, or to the end of the
        file), one chunk at a time, and say whether it was blank: only White_Space, and
        valid UTF-8 (SPEC 13.1)."""
        dec = codecs.getincrementaldecoder("utf-8")("strict")
        blank = True
        data = self.buf[self.pos:]
        self.buf, self.pos = b"", 0
        while True:
            i = data.find(b"\n")
            piece = data if i < 0 else data[:i]
            if blank:
                try:
                    if dec.decode(piece, final=i >= 0).strip(WHITE_SPACE) != "":
                        blank = False
                except UnicodeDecodeError:
                    blank = False
            if i >= 0:
                self.buf, self.pos = data[i + 1:], 0
                return blank
            data = b"" if self.eof else self.f.read(self.CHUNK)
            if not data:
                self.eof = True
                if blank:
                    try:
                        blank = dec.decode(b"", final=True).strip(WHITE_SPACE) == ""
                    except UnicodeDecodeError:
                        blank = False
                return blank

    def rest_is_blank(self) -> bool:
        """Whether everything after the current row is blank rows (SPEC 8.2 step 1:
        is this the last non-blank row?). Streams; holds one chunk at a time."""
        dec = codecs.getincrementaldecoder("utf-8")("strict")
        data = self.buf[self.pos:]
        self.buf, self.pos = b"", 0
        try:
            while True:
                if data and dec.decode(data).strip(WHITE_SPACE) != "":
                    return False
                if self.eof:
                    break
                data = self.f.read(self.CHUNK)
                if not data:
                    self.eof = True
                    break
            return dec.decode(b"", final=True).strip(WHITE_SPACE) == ""
        except UnicodeDecodeError:
            return False


# ---------------------------------------------------------------------------------------
# SPEC 8.3: reasons and their texts
# ---------------------------------------------------------------------------------------

def _at(pos) -> dict:
    return {"session_index": pos[0], "seq": pos[1]}


def _at_text(at: dict) -> str:
    return "session %d seq %d" % (at["session_index"], at["seq"])


SIGNATURE_FAULT_TEXT = {
    "unsigned": "line carries no signature",
    "bad_signature": "signature does not match this line",
    "malformed_public_key": "not a valid ed25519 public key",
}


def fault_text(src: dict) -> str:
    if src["code"] == "key_mismatch":
        return "line was signed under key %s, not %s" % (src["found"], src["expected"])
    return SIGNATURE_FAULT_TEXT[src["code"]]


TAMPERED = {"chain_broken", "seq_out_of_order", "bad_signature",
            "session_boundary_broken", "malformed_line", "untrusted_key",
            "duplicate_decision"}


def reason_text(r: dict) -> str:
    c = r["code"]
    if c == "chain_broken":
        return "line at %s chains to %s, but the line before it hashes to %s" % (
            _at_text(r["at"]), r["found"], r["expected"])
    if c == "seq_out_of_order":
        return "session %d expected seq %d, found %d" % (
            r["session_index"], r["expected"], r["found"])
    if c == "bad_signature":
        return "line at %s: %s" % (_at_text(r["at"]), fault_text(r["source"]))
    if c == "session_boundary_broken":
        if r.get("found") is None:
            return ("session %d carries no prev_session_tail, but the previous session "
                    "ends at %s" % (r["session_index"], r["expected"]))
        return "session %d back-references %s, but the previous session ends at %s" % (
            r["session_index"], r["found"], r["expected"])
    if c == "malformed_line":
        return "line %d: %s" % (r["line"], r["detail"])
    if c == "untrusted_key":
        return ("session opened at %s publishes a key with fingerprint %s, which is not in "
                "the supplied trust store (--key takes the 64-hex public key, not this "
                "fingerprint)" % (_at_text(r["at"]), r["key_id"]))
    if c == "duplicate_decision":
        return "line at %s decides approval %s a second time" % (
            _at_text(r["at"]), r["approval_id"])
    if c == "unknown_line_type":
        return "unknown line type `%s` at %s, newer emitter" % (
            r["line_type"], _at_text(r["at"]))
    if c == "reserved_checkpoint":
        return "reserved checkpoint line at %s, not defined by v0" % _at_text(r["at"])
    if c == "torn_final_line":
        return "final line %d does not parse; torn write" % r["line"]
    if c == "unanchored_tail":
        return ("session %d has no close record and nothing anchors beyond it; "
                "%d call(s) in flight" % (r["session_index"], len(r["in_flight"])))
    if c == "missing_line":
        return "session %d skips seq %d..%d with the chain intact; a write did not land" % (
            r["session_index"], r["expected"], r["found"])
    if c == "empty_chain":
        return "no lines to verify"
    if c == "line_too_long":
        return "line %d is longer than %d bytes; not read" % (r["line"], r["limit"])
    raise ValueError("unknown reason code %r" % c)


# ---------------------------------------------------------------------------------------
# SPEC 8: the walk
# ---------------------------------------------------------------------------------------

class _Tampered(Exception):
    def __init__(self, reason: dict):
        self.reason = reason


class _Walk:
    def __init__(self, trust, pure, on_line=None):
        self.on_line = on_line     # told (canonical bytes, value) of each Line accepted
        self.trust = None if trust is None else set(trust)
        self.pure = pure
        self.session = None        # index of the current Session
        self.expected_seq = 0
        self.tail = None           # line_hash of the last Line accepted
        self.key = None            # (public key bytes, key_id)
        self.key_hex = None
        self.coverage = None
        self.cap = None
        self.in_flight = []        # file order, repeats kept (SPEC 8.1)
        self.closed = False
        self.key_ids = []
        self.decided = set()
        self.lines = 0
        # SPEC 13.4 unfinished_calls: call_id -> intents waiting, in the order each began
        # to wait (a dict keeps it); the count and first 100 of the ended Sessions'.
        self.waiting = {}
        self.waiting_units = 0
        self.unfinished_count = 0
        self.unfinished_calls = []

    # unfinished calls (SPEC 13.4, 18) ----------------------------------------------------
    def _give_up(self, cid, session):
        n = self.waiting.pop(cid)
        self.waiting_units -= _utf16_units(cid)
        self.unfinished_count += n
        for _ in range(n):
            if len(self.unfinished_calls) < MAX_LISTED_UNFINISHED:
                self.unfinished_calls.append({"session_index": session, "call_id": cid})

    def call_waits(self, cid):
        if cid in self.waiting:
            self.waiting[cid] += 1
            return
        self.waiting[cid] = 1
        self.waiting_units += _utf16_units(cid)
        while len(self.waiting) > MAX_WAITING_CALLS or self.waiting_units > MAX_WAITING_UNITS:
            self._give_up(next(iter(self.waiting)), self.session)

    def call_finished(self, cid):
        n = self.waiting.get(cid)
        if n is None:
            return
        if n > 1:
            self.waiting[cid] = n - 1
        else:
            del self.waiting[cid]
            self.waiting_units -= _utf16_units(cid)

    def end_session(self, session):
        for cid in list(self.waiting):
            self._give_up(cid, session)

    # signatures (SPEC 8.4) -------------------------------------------------------------
    def signature_fault(self, line: dict, canonical_without_sig):
        """Returns None when the signature verifies, else the fault source dict."""
        sig = line.get("signature")
        kid = line.get("key_id")
        if "signature" not in line or "key_id" not in line:
            return {"code": "unsigned"}
        if not is_signature_hex(sig) or not is_digest(kid):
            return {"code": "bad_signature"}
        if kid != self.key[1]:
            return {"code": "key_mismatch", "expected": self.key[1], "found": kid}
        if _public_key(self.key[0])[0] is None:
            return {"code": "malformed_public_key"}
        ok, _step = verify_strict(self.key[0], bytes.fromhex(sig),
                                  canonical_without_sig(), pure=self.pure)
        if not ok:
            return {"code": "bad_signature"}
        return None

    def signed_ok(self, pos):
        self.coverage = pos
        self.in_flight = []

    def require_signature(self, line, pos, cwos):
        fault = self.signature_fault(line, cwos)
        if fault is not None:
            raise _Tampered({"code": "bad_signature", "at": _at(pos), "source": fault})
        self.signed_ok(pos)

    def set_cap(self, reason):
        if self.cap is None:
            self.cap = reason

    # one Line (SPEC 8.2 steps 2-7) -----------------------------------------------------
    def line(self, value, line_no: int):
        # 2. canonicalize
        try:
            canon = canonicalize(value)
        except ValueSpaceFault as f:
            raise _Tampered(self.malformed(
                line_no, "outside the canonical value space, so it has no reproducible "
                "hash: " + f.text))
        line_hash = sha256_hex(canon)
        # 3. header
        if type(value) is not dict or type(value.get("line_type")) is not str:
            raise _Tampered(self.malformed(line_no, "no line_type"))
        if not is_integer(value.get("seq")):
            raise _Tampered(self.malformed(line_no, "no seq"))
        if not is_digest(value.get("prev_hash")):
            raise _Tampered(self.malformed(line_no, "no prev_hash"))
        lt, seq, prev = value["line_type"], value["seq"], value["prev_hash"]

        def cwos():
            return canonicalize({k: v for k, v in value.items() if k != "signature"})

        # 4.
        self.closed = False
        # 5.
        if lt == "open":
            n = 0 if self.session is None else self.session + 1
            if seq != 0:
                raise _Tampered({"code": "seq_out_of_order", "session_index": n,
                                 "expected": 0, "found": seq})
            if prev != GENESIS:
                raise _Tampered(self.malformed(
                    line_no, "open line does not anchor on the genesis digest"))
            if self.tail is not None:
                pst = value.get("prev_session_tail")
                if not (is_digest(pst) and pst == self.tail):
                    # SPEC 8.3: a found that is none is omitted, never null
                    reason = {"code": "session_boundary_broken", "session_index": n,
                              "expected": self.tail}
                    if is_digest(pst):
                        reason["found"] = pst
                    raise _Tampered(reason)
            pk = value.get("public_key")
            if not is_digest(pk):
                raise _Tampered(self.malformed(line_no, "open line carries no public key"))
            kid = sha256_hex(bytes.fromhex(pk))
            if kid not in self.key_ids:
                self.key_ids.append(kid)
            if self.trust is not None and pk not in self.trust:
                raise _Tampered({"code": "untrusted_key", "at": _at((n, seq)),
                                 "key_id": kid})
            if self.session is not None:
                self.end_session(self.session)
            self.session = n
            self.key = (bytes.fromhex(pk), kid)
            self.in_flight = []
        else:
            if self.session is None:
                raise _Tampered(self.malformed(
                    line_no, "chain does not begin with an open line"))
            if prev != self.tail:
                raise _Tampered({"code": "chain_broken", "at": _at((self.session, seq)),
                                 "expected": self.tail, "found": prev})
            if seq > self.expected_seq:
                self.set_cap({"code": "missing_line", "session_index": self.session,
                              "expected": self.expected_seq, "found": seq})
            elif seq < self.expected_seq:
                raise _Tampered({"code": "seq_out_of_order",
                                 "session_index": self.session,
                                 "expected": self.expected_seq, "found": seq})
        # 6.
        pos = (self.session, seq)
        if lt == "open":
            self.require_signature(value, pos, cwos)
        elif lt == "outcome":
            self.require_signature(value, pos, cwos)
            if type(value.get("call_id")) is str:
                self.call_finished(value["call_id"])
        elif lt == "decision":
            self.require_signature(value, pos, cwos)
            aid = value.get("approval_id")
            if type(aid) is str:
                if aid in self.decided:
                    raise _Tampered({"code": "duplicate_decision", "at": _at(pos),
                                     "approval_id": aid})
                self.decided.add(aid)
        elif lt == "close":
            self.require_signature(value, pos, cwos)
            self.closed = True
        elif lt == "intent":
            cid = value.get("call_id")
            if type(cid) is str:
                self.in_flight.append(cid)
                self.call_waits(cid)
        elif lt == "checkpoint":
            self.require_signature(value, pos, cwos)
            self.set_cap({"code": "reserved_checkpoint", "at": _at(pos)})
        else:
            fault = self.signature_fault(value, cwos)
            if fault is None:
                self.signed_ok(pos)
            elif not (fault["code"] == "unsigned" and "signature" not in value):
                raise _Tampered({"code": "bad_signature", "at": _at(pos), "source": fault})
            self.set_cap({"code": "unknown_line_type", "at": _at(pos), "line_type": lt})
        # 7.
        self.tail = line_hash
        self.expected_seq = seq + 1
        if self.on_line is not None:
            self.on_line(canon, value)

    @staticmethod
    def malformed(line_no, detail):
        return {"code": "malformed_line", "line": line_no, "detail": detail}


def _result(walk: _Walk, verdict: str, reason, trust) -> dict:
    pinned = trust is not None and verdict == "verified"
    if verdict == "verified":
        if not pinned:
            text = "Verified (unpinned)"
        elif len(walk.key_ids) == 1:
            text = "Verified (pinned to %s)" % walk.key_ids[0]
        else:
            text = "Verified (pinned)"
    else:
        text = "%s: %s" % (verdict.capitalize(), reason_text(reason))
    return {
        "verdict": verdict,
        "reason": reason,
        "text": text,
        "coverage": None if walk.coverage is None else _at(walk.coverage),
        "key_ids": list(walk.key_ids),
        "trust_label": "pinned" if pinned else "unpinned",
        "lines": walk.lines,
        "sessions": 0 if walk.session is None else walk.session + 1,
        "head": walk.tail,
        "unfinished_calls": {"count": walk.unfinished_count,
                             "calls": list(walk.unfinished_calls)},
        "exit_code": EXIT_CODES[verdict],
    }


def verify_stream(f, trust=None, pure=None, limit: int = ROW_LIMIT, on_line=None) -> dict:
    """Verify a record read from the binary file object `f` (SPEC 8)."""
    if trust is not None:
        trust = list(trust)
        for k in trust:
            if not is_digest(k):
                raise ValueError("trust set entries must be 64 lowercase hex public keys: %r"
                                 % (k,))
    walk = _Walk(trust, pure, on_line)
    reader = RowReader(f, limit)
    try:
        while True:
            item = reader.next_row()
            if item is None:
                break
            kind, row = item
            if kind == "too_long":
                # SPEC 13.1: the walk stops; an earlier cap wins.
                walk.lines += 1
                walk.set_cap({"code": "line_too_long", "line": walk.lines, "limit": limit})
                break
            try:
                text = decode_row(row)
            except JsonSyntaxError as e:
                text, err = None, e
            if text is not None:
                if is_blank(text):
                    continue
                try:
                    value = _Parser(text).parse()
                    err = None
                except JsonSyntaxError as e:
                    err = e
            walk.lines += 1
            if err is not None:
                # SPEC 8.2 step 1
                if reader.rest_is_blank():
                    walk.set_cap({"code": "torn_final_line", "line": walk.lines})
                    break
                raise _Tampered(_Walk.malformed(walk.lines, "not JSON: " + err.message))
            walk.line(value, walk.lines)
    except _Tampered as t:
        return _result(walk, "tampered", t.reason, trust)
    if walk.closed:
        # SPEC 13.4: a last Session that closed has ended.
        walk.end_session(walk.session)
    if walk.lines == 0:
        return _result(walk, "indeterminate", {"code": "empty_chain"}, trust)
    if walk.cap is not None:
        return _result(walk, "indeterminate", walk.cap, trust)
    if walk.closed:
        return _result(walk, "verified", None, trust)
    return _result(walk, "indeterminate",
                   {"code": "unanchored_tail", "session_index": walk.session,
                    "in_flight": list(walk.in_flight)}, trust)


def verify(path, trust=None, pure=None, limit: int = ROW_LIMIT, on_line=None) -> dict:
    """Verify the record file at `path`. `trust` is None (unpinned) or a list of 64-hex
    public keys (an empty list is a trust set nothing satisfies, SPEC 8.4).

    Returns a dict: verdict, reason (dict or None), text (SPEC 8.6 line), coverage
    ({session_index, seq} or None), key_ids, trust_label, lines, sessions, head,
    exit_code. Raises OSError when the file cannot be read."""
    with open(path, "rb") as f:
        return verify_stream(f, trust, pure, limit, on_line)


# ---------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------

USAGE = ("usage: aegis_verify.py [--key HEX]... [--trust-store PATH] [--json] "
         "[--pure-python] FILE")


class _Usage(Exception):
    pass


def read_trust_store(path: str) -> list:
    """SPEC 13.4: UTF-8 text; each row (split at \\n, one trailing \\r dropped) trimmed of
    White_Space; empty rows and rows beginning with # skipped; any other row must be 64
    lowercase hex. Raises OSError (unreadable) or _Usage (a bad row)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8", "strict")
    except UnicodeDecodeError:
        raise OSError("stream did not contain valid UTF-8") from None
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    keys = []
    for number, row in enumerate(rows, 1):
        if row.endswith("\r"):
            row = row[:-1]
        row = row.strip(WHITE_SPACE)
        if row == "" or row.startswith("#"):
            continue
        if not is_digest(row):
            raise _Usage("trust store %s line %d is not a public key" % (path, number))
        keys.append(row)
    return keys


def report_text(r: dict) -> str:
    """SPEC 13.4: what `aegis verify` prints on stdout."""
    lines = [r["text"]] + ["key_id %s" % k for k in r["key_ids"]]
    if r["coverage"] is not None:
        lines.append("coverage %s" % _at_text(r["coverage"]))
    reason = r["reason"] or {}
    if reason.get("code") == "unanchored_tail":
        lines.extend("in_flight %s" % c for c in reason["in_flight"])
    return "".join(line + "\n" for line in lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    keys, store, as_json, pure, path = [], None, False, None, None
    try:
        i = 0
        while i < len(argv):
            a = argv[i]
            if a in ("--key", "--trust-store") or a.startswith(("--key=", "--trust-store=")):
                name, eq, v = a.partition("=")
                if not eq:
                    if i + 1 >= len(argv):
                        raise _Usage("%s needs a value" % name)
                    i += 1
                    v = argv[i]
                if name == "--key":
                    if not is_digest(v):
                        raise _Usage("--key needs a 64-hex (lowercase) public key: %r" % v)
                    keys.append(v)
                else:
                    store = v
            elif a == "--json":
                as_json = True
            elif a == "--pure-python":
                pure = True
            elif a in ("-h", "--help"):
                print(USAGE)
                return 0
            elif a.startswith("--") or path is not None:
                raise _Usage("unexpected argument %r" % a)
            else:
                path = a
            i += 1
        if path is None:
            raise _Usage("no record file given")
        trust = None
        if keys or store is not None:
            trust = list(keys)
            if store is not None:
                try:
                    trust += read_trust_store(store)
                except OSError as e:
                    print("error: read trust store %s: %s" % (store, e.strerror or e),
                          file=sys.stderr)
                    return EXIT_CODES["unreadable"]
    except _Usage as e:
        print("error: %s\n%s" % (e, USAGE), file=sys.stderr)
        return EXIT_CODES["usage"]
    try:
        r = verify(path, trust, pure=pure)
    except OSError as e:
        print("error: read %s: %s" % (path, e.strerror or e), file=sys.stderr)
        return EXIT_CODES["unreadable"]
    if as_json:
        print(json.dumps(r, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(report_text(r))
    return r["exit_code"]


if __name__ == "__main__":
    sys.exit(main())
