/**
 * The part of `negotiator` (jshttp) this service uses. @types/negotiator lacks the `preferred`
 * option of `encoding`, which breaks ties between codings of equal quality in the server's order.
 */
declare module 'negotiator' {
  interface NegotiatorRequest {
    readonly headers: Readonly<Record<string, string | undefined>>;
  }

  class Negotiator {
    constructor(request: NegotiatorRequest);
    /** The most acceptable of `available`, or undefined when none is. */
    encoding(available: readonly string[], options?: { readonly preferred?: readonly string[] }): string | undefined;
  }

  export = Negotiator;
}
