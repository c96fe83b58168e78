import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
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

/** Called once a request has a verdict on its key, before any body is read. */
export type AfterAuthentication = (
  request: FastifyRequest,
  reply: FastifyReply,
  verification: Verification,
  done: HookHandlerDoneFunction,
) => void;

/**
 * onRequest step 1: every non-public request, known route or not, must carry a valid key.
 * Runs before the body is read, so an unauthenticated client cannot make the service parse 16 KiB.
 * Callback style because the answer is nearly always cached and synchronous.
 */
export function authenticationHook(verifier: KeyVerifier, next: AfterAuthentication): onRequestHookHandler {
  return function authenticate(request, reply, done) {
    if (request.routeOptions.config.public === true) {
      done();
      return;
    }
    const verification = verifier.verify(request.headers.authorization);
    if (verification instanceof Promise) {
      verification.then((settled) => decide(request, reply, settled, done, next), done);
    } else {
      decide(request, reply, verification, done, next);
    }
  };
}

function decide(
  request: FastifyRequest,
  reply: FastifyReply,
  verification: Verification,
  done: HookHandlerDoneFunction,
  next: AfterAuthentication,
): void {
  if (verification.ok) request.principal = verification.principal;
  next(request, reply, verification, done);
}

/** The default second step when no limiter is installed: refuse what failed verification. */
export function refuseUnauthenticated(
  _request: FastifyRequest,
  reply: FastifyReply,
  verification: Verification,
  done: HookHandlerDoneFunction,
): void {
  if (verification.ok) {
    done();
    return;
  }
  sendUnauthorized(reply, verification);
}

export function sendUnauthorized(reply: FastifyReply, verification: Verification & { ok: false }): void {
  const challenge =
    verification.reason === 'missing' || verification.reason === 'wrong_scheme'
      ? 'Bearer realm="petstore"'
      : `Bearer realm="petstore", error="invalid_token", error_description="${verification.message.replace(/"/g, "'")}"`;
  reply.header('www-authenticate', challenge);
  sendError(reply, 'unauthorized', verification.message);
}
