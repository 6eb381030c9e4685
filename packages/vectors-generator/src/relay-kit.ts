import type { RelayTranscript } from "@aegis/vectors/oracle";

/** One event of a relay transcript. */
type RelayEvent = RelayTranscript["events"][number];
import type { Polarity } from "./vector-set.js";

// What the relay vectors are written with (relay.ts, relay-policy-cases.ts).

export const json = (value: unknown): string => JSON.stringify(value);
export const call = (id: unknown, name: string, args: Record<string, unknown> = {}): string =>
  json({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
export const ok = (id: unknown, result: unknown = { content: [{ type: "text", text: "done" }] }): string => json({ jsonrpc: "2.0", id, result });
export const client = (text: string): RelayEvent => ({ client: text });
export const server = (text: string): RelayEvent => ({ server: text });

export interface Case {
  readonly name: string;
  readonly polarity: Polarity;
  readonly spec: readonly string[];
  readonly description: string;
  readonly events: readonly RelayEvent[];
  readonly policy?: boolean;
  readonly role?: string;
  /** How refused calls are answered (SPEC §17.3); absent, the default (`tool-result`). */
  readonly refusal?: "reference";
}
