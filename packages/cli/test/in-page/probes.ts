/// <reference lib="dom" />
// This file runs in the page; the reference gives the type checker the DOM (its importers run in Node).
/**
 * Functions the browser tests run inside the page (playwright sends their text): typed
 * against the DOM by the page's tsconfig, not Node's.
 */

/** What the page says now about the record it finished with. */
export function verdictNow(): { state: string; verdict: string | undefined; json: Record<string, unknown> | undefined; banner: string } {
  const text = document.getElementById("verification-json")?.textContent ?? "";
  return {
    state: document.body.dataset["state"] ?? "",
    verdict: document.body.dataset["verdict"],
    json: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>),
    banner: document.getElementById("banner")?.innerText ?? "",
  };
}

export function finishedAtLeast(count: number): boolean {
  return Number(document.body.dataset["finished"] ?? "0") >= count;
}

export interface Ed25519Case {
  readonly id: string;
  readonly public_key: string;
  readonly message: string;
  readonly signature: string;
}

/**
 * A signature worker made from the page's own worker script, told to use `backend`, asked
 * about each case alone: which back end it chose, and its answer per case.
 */
export async function ed25519InWorker(input: {
  cases: readonly Ed25519Case[];
  backend: "noble" | "auto";
}): Promise<{ backend: string | undefined; found: Record<string, boolean | undefined> }> {
  type Answer = { code: string; backend?: string; valid?: boolean };
  const source = document.getElementById("aegis-worker")?.textContent ?? "";
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
  const bytes = (hex: string): Uint8Array => Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16));
  const answer = (): Promise<Answer> => new Promise((resolve) => (worker.onmessage = (event: MessageEvent<Answer>) => resolve(event.data)));
  worker.postMessage({ code: "hello", backend: input.backend });
  const ready = await answer();
  const found: Record<string, boolean | undefined> = {};
  for (const [id, c] of input.cases.entries()) {
    worker.postMessage({ code: "check", id, key: c.public_key, message: bytes(c.message), signature: bytes(c.signature) });
    found[c.id] = (await answer()).valid;
  }
  worker.terminate();
  return { backend: ready.backend, found };
}

/** A DataTransfer holding one file, as a drop from the desktop carries it. */
export function fileTransfer(input: { base64: string; name: string }): DataTransfer {
  const data = new DataTransfer();
  data.items.add(new File([Uint8Array.from(atob(input.base64), (c) => c.charCodeAt(0))], input.name));
  return data;
}
