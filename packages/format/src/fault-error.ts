/**
 * An error that carries a fault: a value tagged with a stable `code` that a caller matches on,
 * with the fault's words as its message. Every such error of aegis extends it, so each names
 * its class, keeps its fault and words it the same way (ADR 0030).
 *
 * @typeParam F - the fault union the error carries.
 */
export class FaultError<F> extends Error {
  /** The class's name, as a string, so a bundler that renames classes does not change it. */
  override readonly name: string;
  /** What went wrong, as a value to match on. */
  readonly fault: F;
  constructor(name: string, fault: F, describe: (fault: F) => string, options?: ErrorOptions) {
    super(describe(fault), options);
    this.name = name;
    this.fault = fault;
  }
}
