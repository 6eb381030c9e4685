/**
 * What `aegis wrap --otlp` exports, beyond what every span carries (SPEC Appendix A.5). On a
 * page of its own: the public types of `@aegis/mcp` name it, and must not name the
 * OpenTelemetry packages, which are optional peers (ADR 0024).
 */
export interface OtlpOptions {
  /**
   * Put each call's arguments and result on its span (`gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`). Off by default: they may hold secrets, and a tracing backend
   * is not where a record's secrets are kept.
   */
  readonly content?: boolean;
}
