import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitPolicy, Refusal, Standing } from '../ratelimit/rate-limit-policy.ts';
import type { RateLimitFields } from '../ratelimit/rate-limit-headers.ts';
import type { ClientAddressOf } from '../net/client-address.ts';
import { sendError } from './error-body.ts';
import { sendUnauthorized, type AfterAuthentication } from './plugins/authentication.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the limits step on routes that report the account's standing (GET /v1/usage). */
    standing: Standing | undefined;
    /** Set by the limits step when it refused the request, and why. */
    refusal: Refusal['kind'] | undefined;
  }
}

/**
 * The step after the key verdict, run by the authentication hook (plugins/authentication.ts): count
 * the request against its account (valid key) or its client address (no valid key), set the
 * rate-limit fields that every response then carries, and answer 429 or 401 where due. Runs before
 * the body is read.
 */
export function limitsStep(policy: RateLimitPolicy, clientAddressOf: ClientAddressOf): AfterAuthentication {
  const addressOf = (request: FastifyRequest): string =>
    clientAddressOf(request.socket.remoteAddress, request.headers['x-forwarded-for']);
  const step: AfterAuthentication = async (request, reply, verification) => {
    if (verification.ok && request.routeOptions.config.reportsStanding === true) {
      const usage = await policy.forUsage(verification.principal);
      applyFields(reply, usage.fields);
      if (usage.kind === 'allow') request.standing = usage.standing;
      else sendRefusal(reply, usage);
      return;
    }
    const verdict = verification.ok
      ? await policy.forKey(verification.principal)
      : await policy.forAddress(addressOf(request));
    applyFields(reply, verdict.fields);
    if (verdict.kind !== 'allow') {
      sendRefusal(reply, verdict);
    } else if (!verification.ok) {
      sendUnauthorized(reply, verification);
    }
  };
  // An address already over its limit would get 429 whatever storage says about its key, so it is
  // refused before the lookup: guessing keys at speed then costs storage nothing.
  const beforeLookup = async (request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    const refusal = await policy.refusalForAddress(addressOf(request));
    if (refusal === undefined || refusal.kind === 'allow') return false;
    applyFields(reply, refusal.fields);
    sendRefusal(reply, refusal);
    return true;
  };
  return Object.assign(step, { beforeLookup });
}

function sendRefusal(reply: FastifyReply, verdict: Refusal): void {
  reply.request.refusal = verdict.kind;
  reply.header('retry-after', String(verdict.retryAfterSeconds));
  sendError(reply, verdict.kind, verdict.message);
}

function applyFields(reply: FastifyReply, fields: RateLimitFields): void {
  reply.header('x-ratelimit-limit', fields['x-ratelimit-limit']);
  reply.header('x-ratelimit-remaining', fields['x-ratelimit-remaining']);
  reply.header('x-ratelimit-reset', fields['x-ratelimit-reset']);
  reply.header('ratelimit-policy', fields['ratelimit-policy']);
  reply.header('ratelimit', fields.ratelimit);
}
