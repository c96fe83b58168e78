import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { KeyVerifier, Verification } from '../auth/key-verifier.ts';
import type { KeyPrincipal } from '../storage/store.ts';
import { sendError } from './error-body.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified key and its account; undefined on public routes and before authentication. */
    principal: KeyPrincipal | undefined;
  }
  interface FastifyContextConfig {
    /** Served without an API key (documents and operator endpoints). */
    public?: boolean;
  }
}

/**
 * Called once a request has a verdict on its key, before any body is read. It either lets the
 * request go on, or answers it (reply.send) before it resolves, which stops the request there.
 */
export type AfterAuthentication = (
  request: FastifyRequest,
  reply: FastifyReply,
  verification: Verification,
) => Promise<void>;

/**
 * onRequest step 1: every non-public request, known route or not, must carry a valid key.
 * Runs before the body is read, so an unauthenticated client cannot make the service parse 16 KiB.
 */
export function authenticationHook(verifier: KeyVerifier, next: AfterAuthentication): onRequestAsyncHookHandler {
  return async function authenticate(request, reply) {
    if (request.routeOptions.config.public === true) return;
    const verification = await verifier.verify(request.headers.authorization);
    if (verification.ok) request.principal = verification.principal;
    await next(request, reply, verification);
  };
}

/** The default second step when no limiter is installed: refuse what failed verification. */
export async function refuseUnauthenticated(
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
  return `Bearer realm="petstore", error="invalid_token", error_description="${description}"`;
}
