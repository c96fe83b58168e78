import type { FastifyReply } from 'fastify';
import type { RateLimitPolicy, LimitVerdict } from '../ratelimit/rate-limit-policy.ts';
import type { AfterAuthentication } from './auth-hook.ts';
import type { ClientAddressOf } from './client-address.ts';
import { sendUnauthorized } from './auth-hook.ts';
import { sendError } from './error-body.ts';

/**
 * onRequest step 2, after the key verdict: count the request against its account (valid key) or
 * its client address (no valid key), set the rate-limit fields that every response then carries,
 * and answer 429 or 401 where due. Runs before the body is read.
 */
export function limitsStep(policy: RateLimitPolicy, clientAddressOf: ClientAddressOf): AfterAuthentication {
  return async (request, reply, verification) => {
    const verdict = verification.ok
      ? await policy.forKey(verification.principal)
      : await policy.forAddress(clientAddressOf(request.socket.remoteAddress, request.headers['x-forwarded-for']));
    applyFields(reply, verdict);
    if (verdict.kind !== 'allow') {
      reply.header('retry-after', String(verdict.retryAfterSeconds));
      sendError(reply, verdict.kind, verdict.message);
    } else if (!verification.ok) {
      sendUnauthorized(reply, verification);
    }
  };
}

function applyFields(reply: FastifyReply, verdict: LimitVerdict): void {
  const fields = verdict.fields;
  reply.header('x-ratelimit-limit', fields['x-ratelimit-limit']);
  reply.header('x-ratelimit-remaining', fields['x-ratelimit-remaining']);
  reply.header('x-ratelimit-reset', fields['x-ratelimit-reset']);
  reply.header('ratelimit-policy', fields['ratelimit-policy']);
  reply.header('ratelimit', fields.ratelimit);
}
