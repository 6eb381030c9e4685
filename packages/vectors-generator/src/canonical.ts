import { answerVector } from "@aegis/vectors/oracle";
import type { Polarity, VectorSet } from "./vector-set.js";

/** [name, polarity, input row, what it isolates]. SPEC §3. */
type Case = readonly [string, Polarity, string, string];

const DEPTH_128 = `${"[".repeat(128)}${"]".repeat(128)}`;

const CASES: readonly Case[] = [
  [
    "spec_11_1",
    "positive",
    `{"tool_id":"echo","seq":7,"decision_axes":{"role":"ops","capability":"fs.read","fs":{"path_raw":"~/notes.md","path_canonical":"/home/a/notes.md"}},"line_type":"outcome","prev_hash":"0000000000000000000000000000000000000000000000000000000000000000"}`,
    "The reference's published vector (SPEC 11.1).",
  ],
  [
    "whitespace_and_order",
    "positive",
    `{ "b" : [ 3 , 1 ] ,\n\t"a" : { "y" : true , "x" : false } }`,
    "Whitespace removed, members sorted, arrays kept in order.",
  ],
  [
    "escapes",
    "positive",
    String.raw`{"k":"quote \" backslash \\ slash \/ tab \t nul \u0000 us \u001f del \u007f e\u0301"}`,
    "Only quote, backslash and U+0000..U+001F are escaped; short forms where they exist; lowercase hex; / and U+007F literal; no Unicode normalization.",
  ],
  [
    "utf16_order",
    "positive",
    String.raw`{"\ue000":1,"\ud800\udc00":2}`,
    "U+10000 (UTF-16 D800 DC00) sorts before U+E000; UTF-8 byte order would put it after.",
  ],
  ["utf16_order_raw", "positive", `{"\u{E000}":1,"\u{1F600}":2,"z":3}`, "Raw (unescaped) non-BMP keys sort by UTF-16 code units too."],
  ["largest_integer", "positive", `{"seq":9007199254740991}`, "2^53 - 1 is the largest integer in the value space."],
  ["zero", "positive", `{"seq":0}`, "Zero is an integer in the value space."],
  ["empty_containers", "positive", `{"a":{},"b":[],"c":""}`, "Empty object, array and string."],
  ["duplicate_key_last_wins", "positive", `{"a":1,"a":2}`, "A key repeated in one object takes the last value."],
  ["depth_127", "positive", `${"[".repeat(127)}${"]".repeat(127)}`, "Nesting of 127 is within the reader's depth bound."],
  ["float", "negative", `{"wall_ms":1.5}`, "No floats."],
  ["integral_float", "negative", `{"wall_ms":1.0}`, "1.0 is a float."],
  ["exponent", "negative", `{"wall_ms":1e3}`, "An exponent makes a float."],
  ["exponent_upper", "negative", `{"wall_ms":1E2}`, "An upper-case exponent makes a float."],
  ["zero_point_zero", "negative", `{"wall_ms":0.0}`, "0.0 is a float."],
  ["huge_exponent", "negative", `{"wall_ms":1e400}`, "A number that overflows a double is not JSON (serde_json: number out of range), SPEC §3.3."],
  ["minus_zero", "negative", `{"seq":-0}`, "-0 is read as a float."],
  ["negative", "negative", `{"seq":-1}`, "No negative integers."],
  ["negative_float", "negative", `{"seq":-1.5}`, "A negative non-integer is a float."],
  ["two_pow_53", "negative", `{"seq":9007199254740992}`, "2^53 is out of the space."],
  ["two_pow_64", "negative", `{"seq":18446744073709551616}`, "An integer literal beyond u64 is read as a float (serde_json), SPEC §3.3."],
  ["null", "negative", `{"grant_id":null}`, "Absent is omitted, never null."],
  ["null_in_array", "negative", `{"a":[1,null]}`, "null inside an array is named by its index."],
  ["duplicate_key_last_null", "negative", `{"a":1,"a":null}`, "The last of a repeated key is the value, and null is refused."],
  ["nested_path", "negative", `{"a":{"b":[1,2.5]}}`, "The path names the offending value."],
  ["first_in_canonical_order", "negative", `{"z":null,"a":1.5}`, "The first offending value in canonical member order is named."],
  ["trailing_comma", "negative", `{"a":1,}`, "A trailing comma is not JSON."],
  ["single_quotes", "negative", `{'a':1}`, "Single quotes are not JSON."],
  ["leading_zero", "negative", `{"a":01}`, "A leading zero is not JSON."],
  ["nan", "negative", `{"a":NaN}`, "NaN is not JSON."],
  ["infinity", "negative", `{"a":Infinity}`, "Infinity is not JSON."],
  ["raw_tab_in_string", "negative", `{"a":"x\ty"}`, "A raw control character inside a string is not JSON."],
  ["trailing_garbage", "negative", `{"a":1} x`, "Anything after the value is not JSON."],
  ["two_values", "negative", `{"a":1}{"b":2}`, "Two values on one row are not JSON."],
  ["empty_row", "negative", ``, "An empty text is not JSON."],
  ["lone_high_surrogate", "negative", String.raw`{"a":"\ud800"}`, "A lone surrogate escape is not a Unicode string."],
  ["lone_low_surrogate", "negative", String.raw`{"a":"\udc00x"}`, "A lone low surrogate escape is not a Unicode string."],
  ["bad_escape", "negative", String.raw`{"a":"\x41"}`, "\\x is not a JSON escape."],
  ["byte_order_mark", "negative", `\u{FEFF}{"a":1}`, "A byte order mark is not JSON whitespace."],
  ["depth_128", "negative", DEPTH_128, "Nesting deeper than 127 is refused by the reader (serde_json's bound)."],
  ["unquoted_key", "negative", `{a:1}`, "Keys are strings."],
  ["true_upper", "negative", `{"a":True}`, "Literals are lower case."],
];

export async function canonicalVectors(set: VectorSet): Promise<void> {
  for (const [name, polarity, row, description] of CASES) {
    const path = set.file(`canonical/${name}.txt`, row);
    const expected = await answerVector({ kind: "canonical", row });
    // Each case states which side of the line it is on; the answer must agree.
    if ((expected.result === "canonical") !== (polarity === "positive")) throw new Error(`canonical/${name}: ${polarity} case answered ${expected.result}`);
    const spec = expected.result === "canonical" ? ["3.1"] : expected.result === "out_of_space" ? ["3.2"] : ["3.3"];
    set.add({ id: `canonical/${name}`, kind: "canonical", description, spec, flags: [polarity, "canonical"], input: { row: path }, expected });
  }
}
