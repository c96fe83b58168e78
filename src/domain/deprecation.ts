/** A deprecated operation: when it was deprecated and when it is removed (RFC 9745, RFC 8594). */
export interface Deprecation {
  readonly deprecatedAt: Date;
  readonly sunsetAt: Date;
}
