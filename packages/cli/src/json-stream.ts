/**
 * A `--json` document whose one array is written as it is made (recheck's verdicts, envelope
 * verify's digests), so that memory does not grow with the record. A command builds each
 * member as a value; this is the one place that lays a document out. The members before the
 * array are laid out as `JSON.stringify(document, null, 2)` would; each item of the array,
 * and each member after it, is on one line of its own.
 */
export class StreamedDocument {
  private items = 0;

  constructor(
    /** The array's member name. */
    private readonly array: string,
  ) {}

  /** `{`, the members before the array, and the array's `[`. */
  start(head: Readonly<Record<string, unknown>>): string {
    const members = Object.entries(head).flatMap(([key, value]) => member(key, JSON.stringify(value, null, 2)));
    return `{\n${[...members, `  ${JSON.stringify(this.array)}: [`].join(",\n")}`;
  }

  /** One item of the array. */
  item(value: unknown): string {
    return `${this.items++ === 0 ? "" : ","}\n    ${JSON.stringify(value)}`;
  }

  /** The array's `]` (`[]` when it holds nothing), the members after it, and `}`. */
  end(tail: Readonly<Record<string, unknown>>): string {
    const members = Object.entries(tail).flatMap(([key, value]) => member(key, JSON.stringify(value)));
    return `${this.items === 0 ? "" : "\n  "}]${members.map((m) => `,\n${m}`).join("")}\n}\n`;
  }
}

/** One member at the document's first level; an undefined value is left out, as `JSON.stringify` leaves it. */
function member(key: string, text: string | undefined): string[] {
  return text === undefined ? [] : [`  ${JSON.stringify(key)}: ${text.replaceAll("\n", "\n  ")}`];
}
