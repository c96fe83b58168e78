import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { AMBIGUOUS_CREDENTIALS, type KeyVerifier, type Verification } from '../../auth/key-verifier.ts';
import type { KeyPrincipal } from '../../domain/principal.ts';
import { sendError } from '../error-body.ts';
import { refuseOutOfScope } from './key-scopes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified key and its account; undefined on public routes and before authentication. */
    principal: KeyPrincipal | undefined;
  }
}

/**
 * Called once a request has a verdict on its key, before any body is read. It either lets the
 * request go on, or answers it (reply.send) before it resolves, which stops the request there.
 */
export interface AfterAuthentication {
  (request: FastifyRequest, reply: FastifyReply, verification: Verification): Promise<void>;
  /**
   * Called before a well-formed key that this instance has never seen is looked up in storage.
   * Answers the request and resolves true when it must stop there (its client address is over its
   * limit), so a client guessing keys costs no storage lookup.
   */
  readonly beforeLookup?: (request: FastifyRequest, reply: FastifyReply) => Promise<boolean>;
}

export interface AuthenticationOptions {
  readonly keyVerifier: KeyVerifier;
  /** The limits step (src/http/limits-step.ts); without it, requests are only authenticated. */
  readonly limits?: AfterAuthentication;
}

/**
 * Authentication, limits and scopes, in one onRequest hook: every non-public request, known route or
 * not, must carry a valid key, is then counted by the limits step, and must hold the route's scope.
 * Runs before the body is read, so an unauthenticated client cannot make the service parse 16 KiB.
 * Registered after CORS, so that preflight requests are answered without a key.
 */
export const authentication = fastifyPlugin<AuthenticationOptions>(
  async (app: FastifyInstance, options: AuthenticationOptions) => {
    app.decorateRequest('principal', undefined);
    // Set by the limits step; declared with it.
    app.decorateRequest('standing', undefined);
    app.decorateRequest('refusal', undefined);
    const authenticate = authenticator(options.keyVerifier, options.limits ?? refuseUnauthenticated);
    app.addHook('onRequest', (request, reply, done) => {
      authenticate(request, reply).then(
        () => done(),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    });
  },
  { name: 'authentication' },
);

function authenticator(
  verifier: KeyVerifier,
  next: AfterAuthentication,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async (request, reply) => {
    if (request.routeOptions.config.public === true) return;
    let verification = verifyLocally(verifier, request);
    if (verification === undefined) {
      const invented = !verifier.recognises(request.headers.authorization);
      if (invented && next.beforeLookup !== undefined && (await next.beforeLookup(request, reply))) return;
      verification = await verifier.verify(request.headers.authorization);
    }
    if (verification.ok) request.principal = verification.principal;
    await next(request, reply, verification);
    if (verification.ok && !reply.sent) refuseOutOfScope(request, reply, verification.principal);
  };
}

/** The verdict reached without storage, or undefined when the key must be looked up. */
function verifyLocally(verifier: KeyVerifier, request: FastifyRequest): Verification | undefined {
  // Node keeps only the first of repeated Authorization headers in `headers`; the raw list has them all.
  if (authorizationHeaderCount(request.raw.rawHeaders) > 1) return AMBIGUOUS_CREDENTIALS;
  return verifier.verifyWithoutStorage(request.headers.authorization);
}

function authorizationHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

/** The default second step when no limiter is installed: refuse what failed verification. */
async function refuseUnauthenticated(
  _request: FastifyRequest,
  reply: FastifyReply,
  verification: Verification,
): Promise<void> {
  if (!verification.ok) sendUnauthorized(reply, verification);
}

export function sendUnauthorized(reply: FastifyReply, verification: Verification & { ok: false }): void {
  reply.header('www-authenticate', challengeOf(verification));
  sendError(reply, 'unauthorized', verification.message);
}

function challengeOf(verification: Verification & { ok: false }): string {
  if (verification.reason === 'missing' || verification.reason === 'wrong_scheme') return 'Bearer realm="petstore"';
  const description = verification.message.replace(/"/g, "'");
  // RFC 6750: more than one way of passing a token is a malformed request, not a bad token.
  const error = verification.reason === 'ambiguous' ? 'invalid_request' : 'invalid_token';
  return `Bearer realm="petstore", error="${error}", error_description="${description}"`;
}
