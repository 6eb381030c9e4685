import type { SigningKey } from "@aegis/format";
import { serveWitness as listen } from "./witness-http.js";
import { WitnessState } from "./witness-state.js";
import { Witness } from "./witness.js";

/**
 * Run a witness (`c2sp.org/tlog-witness`, SPEC §19.6) until `close`: its state read from (and
 * kept in) `stateDir`, its `add-checkpoint` served at `http://<host>:<port>`.
 *
 * @throws Error when the state directory is another witness's, or cannot be read; the
 * listener's error when the address cannot be listened on.
 */
export async function serveWitness(options: {
  /** The witness's signing key. */
  readonly key: SigningKey;
  /** Its name: the key name its cosignature lines carry. */
  readonly name: string;
  /** Per origin, the Ed25519 public keys a checkpoint of it may be signed with. */
  readonly logs: ReadonlyMap<string, readonly Uint8Array[]>;
  /** Where what it cosigned is kept (made, mode 0700, when absent). */
  readonly stateDir: string;
  readonly host: string;
  /** 0: one the system picks. */
  readonly port: number;
  /** Where it says what went wrong with a request. */
  readonly say: (text: string) => void;
  /** The cosignatures' time, in POSIX seconds (default: now). */
  readonly now?: () => bigint;
}): Promise<{ readonly url: string; close(): Promise<void> }> {
  const state = await WitnessState.open(options.stateDir);
  try {
    const witness = new Witness({
      key: options.key,
      name: options.name,
      logs: options.logs,
      state,
      ...(options.now === undefined ? {} : { now: options.now }),
    });
    const listener = await listen(witness, options.host, options.port, options.say);
    return {
      url: listener.url,
      close: async () => {
        await listener.close();
        await state.close();
      },
    };
  } catch (error) {
    await state.close();
    throw error;
  }
}
