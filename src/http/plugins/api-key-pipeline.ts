import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { AMBIGUOUS_CREDENTIALS, type KeyVerifier, type Verification } from '../../auth/key-verifier.ts';
import type { Clock } from '../../clock.ts';
import type { UsageOperation, UsageOutcome } from '../../domain/usage.ts';
import type { ClientAddressOf } from '../../net/client-address.ts';
import { rawHeaderCount } from '../../net/raw-headers.ts';
import type { RateLimitFields } from '../../ratelimit/rate-limit-headers.ts';
import type {
  LimitVerdict,
  RateLimitPolicy,
  Refusal,
  Standing,
  UsageVerdict,
} from '../../ratelimit/rate-limit-policy.ts';
import type { KeyPrincipal } from '../../domain/principal.ts';
import type { TalliedRequest } from '../../usage/usage-tally.ts';
import { documentedPath } from '../document-paths.ts';
import { sendError } from '../error-body.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified key and its account; undefined on public routes and before the key is verified. */
    principal: KeyPrincipal | undefined;
    /** The account's standing, on a route that reports it (GET /v1/usage) once its own limit let it through. */
    standing: Standing | undefined;
    /** Why the request's limits refused it. */
    refusal: Refusal['kind'] | undefined;
  }
}

/** What counts requests and refuses those over their limits. */
export interface RequestLimits {
  readonly policy: RateLimitPolicy;
  /** The address a request without a valid key is counted by (src/net/client-address.ts). */
  readonly clientAddressOf: ClientAddressOf;
}

export interface UsageTallyOptions {
  /** Counts one answered request; false when it could not be counted (the tally is full). */
  readonly count: (request: TalliedRequest) => boolean;
  readonly clock: Clock;
  readonly onUncounted?: () => void;
  /**
   * The key an Authorization header named when this instance last verified it, if it was valid then
   * (the key cache, however old its answer): whose request a 5xx refused before verification was.
   */
  readonly knownPrincipal?: (authorization: string | undefined) => KeyPrincipal | undefined;
  /** An answer of a usage operation that no account's history counts (a metric). */
  readonly onUnattributed?: (operation: UsageOperation, outcome: UsageOutcome) => void;
}

export interface ApiKeyPipelineOptions {
  readonly keyVerifier: KeyVerifier;
  /** Without limits, requests are verified and scoped but never counted. */
  readonly limits?: RequestLimits;
  readonly tally: UsageTallyOptions;
}

type FailedVerification = Verification & { ok: false };

/**
 * What every request behind a key goes through, in one place and in this order, before any body is
 * read (so an unauthenticated client cannot make the service parse 16 KiB):
 *
 * 1. verify the key: from the key cache, else from storage (an address already over its limit is
 *    refused before that lookup);
 * 2. count the request against its account, or its client address without a valid key: 429, or the
 *    key's ban;
 * 3. refuse a key that failed verification: 401, once counted;
 * 4. refuse a key without the route's scope: 403, counted like any other request of the key;
 *
 * and, once any request of a usage operation is answered, 5. tally it for the account's usage history.
 * Each refusal is sent by its own function below, with or without limits.
 *
 * Registered after CORS, so that preflight requests need no key. The onRequest hook is callback-style
 * and calls `done` once the steps settle (src/http/core.ts says why).
 */
export const apiKeyPipeline = fastifyPlugin<ApiKeyPipelineOptions>(
  async (app: FastifyInstance, options: ApiKeyPipelineOptions) => {
    app.decorateRequest('principal', undefined);
    app.decorateRequest('standing', undefined);
    app.decorateRequest('refusal', undefined);
    const admit = admission(options.keyVerifier, options.limits);
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.config.public === true) return done();
      admit(request, reply).then(
        () => done(),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    });
    app.addHook('onResponse', (request, reply, done) => {
      tallyAnswer(request, reply.statusCode, options.tally);
      done();
    });
  },
  { name: 'api-key-pipeline' },
);

/** Steps 1 to 4; each refusal answers the request (reply.send) and ends the steps there. */
function admission(
  verifier: KeyVerifier,
  limits: RequestLimits | undefined,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async (request, reply) => {
    const verification = verifyLocally(verifier, request) ?? (await lookUpKey(verifier, limits, request, reply));
    // Refused before the lookup: its address is over its limit.
    if (verification === undefined) return;
    if (verification.ok) request.principal = verification.principal;
    if (limits !== undefined) {
      const verdict = await countRequest(limits, request, verification);
      applyLimitFields(reply, verdict.fields);
      if (verdict.kind !== 'allow') return refuseOverLimit(reply, verdict);
      if ('standing' in verdict) request.standing = verdict.standing;
    }
    if (!verification.ok) return refuseUnauthenticated(reply, verification);
    refuseOutOfScope(request, reply, verification.principal);
  };
}

/** Step 1, without storage: the verdict on the key, or undefined when it must be looked up. */
function verifyLocally(verifier: KeyVerifier, request: FastifyRequest): Verification | undefined {
  // Node keeps only the first of repeated Authorization headers in `headers`; the raw list has them all.
  if (rawHeaderCount(request.raw.rawHeaders, 'authorization') > 1) return AMBIGUOUS_CREDENTIALS;
  return verifier.verifyWithoutStorage(request.headers.authorization);
}

/**
 * Step 1, from storage. A well-formed key this instance has never seen, from an address already over
 * its limit, would get 429 whatever storage says about it, so it is refused before the lookup
 * (undefined): guessing keys at speed then costs storage nothing.
 */
async function lookUpKey(
  verifier: KeyVerifier,
  limits: RequestLimits | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Verification | undefined> {
  const authorization = request.headers.authorization;
  if (limits !== undefined && !verifier.recognises(authorization)) {
    const refusal = await limits.policy.refusalForAddress(addressOf(limits, request));
    if (refusal !== undefined && refusal.kind !== 'allow') {
      applyLimitFields(reply, refusal.fields);
      refuseOverLimit(reply, refusal);
      return undefined;
    }
  }
  return verifier.verify(authorization);
}

/**
 * Step 2: counts the request against its account (a valid key) or its client address (no valid key).
 * A route that reports the account's standing is counted in a per-account window of its own instead.
 */
function countRequest(
  limits: RequestLimits,
  request: FastifyRequest,
  verification: Verification,
): Promise<LimitVerdict | UsageVerdict> {
  if (!verification.ok) return limits.policy.forAddress(addressOf(limits, request));
  if (request.routeOptions.config.reportsStanding === true) return limits.policy.forUsage(verification.principal);
  return limits.policy.forKey(verification.principal);
}

function addressOf({ clientAddressOf }: RequestLimits, request: FastifyRequest): string {
  return clientAddressOf(request.socket.remoteAddress, request.headers['x-forwarded-for']);
}

/** The rate-limit fields every answer of a counted request carries, refused or not. */
function applyLimitFields(reply: FastifyReply, fields: RateLimitFields): void {
  reply.header('x-ratelimit-limit', fields['x-ratelimit-limit']);
  reply.header('x-ratelimit-remaining', fields['x-ratelimit-remaining']);
  reply.header('x-ratelimit-reset', fields['x-ratelimit-reset']);
  reply.header('ratelimit-policy', fields['ratelimit-policy']);
  reply.header('ratelimit', fields.ratelimit);
}

/** 429 `rate_limited`, or `key_banned` while the key's ban lasts, with the Retry-After. */
function refuseOverLimit(reply: FastifyReply, refusal: Refusal): void {
  reply.request.refusal = refusal.kind;
  reply.header('retry-after', String(refusal.retryAfterSeconds));
  sendError(reply, refusal.kind, refusal.message);
}

/** 401 `unauthorized`, with the challenge RFC 6750 asks for. */
function refuseUnauthenticated(reply: FastifyReply, verification: FailedVerification): void {
  reply.header('www-authenticate', challengeOf(verification));
  sendError(reply, 'unauthorized', verification.message);
}

function challengeOf(verification: FailedVerification): string {
  if (verification.reason === 'missing' || verification.reason === 'wrong_scheme') return 'Bearer realm="petstore"';
  const description = verification.message.replace(/"/g, "'");
  // RFC 6750: more than one way of passing a token is a malformed request, not a bad token.
  const error = verification.reason === 'ambiguous' ? 'invalid_request' : 'invalid_token';
  return `Bearer realm="petstore", error="${error}", error_description="${description}"`;
}

/**
 * 403 `insufficient_scope` when the verified key lacks the scope the route needs (its config's
 * `scope`, documented by plugins/key-scopes.ts). Reads only the cached principal: no storage round trip.
 */
function refuseOutOfScope(request: FastifyRequest, reply: FastifyReply, principal: KeyPrincipal): void {
  const scope = request.routeOptions.config.scope;
  if (scope === undefined || scope === null || principal.scopes.includes(scope)) return;
  const operation = `${request.method} ${documentedPath(request.routeOptions.url ?? request.url)}`;
  const held = principal.scopes.join(', ');
  reply.header(
    'www-authenticate',
    `Bearer realm="petstore", error="insufficient_scope", scope="${scope}", ` +
      `error_description="the key lacks the scope ${scope}"`,
  );
  sendError(
    reply,
    'insufficient_scope',
    `this API key may not call ${operation}: that needs the scope '${scope}', and the key has ${held}`,
  );
}

/**
 * Step 5, once the answer is sent: counts an answer of a usage operation (the route's config says
 * which) in the usage tally when its key's account is known (banned keys included), otherwise through
 * `onUnattributed`. Only counts in memory: the flusher stores the tally off the request path.
 *
 * A request refused with a 5xx before its key was verified (storage did not answer the lookup, or
 * the service was shutting down) still belongs to the key's account when this instance has verified
 * that key before: the answer it had then names the account, and counting the 503s of an outage
 * where the account can see them is what the history is for.
 */
function tallyAnswer(request: FastifyRequest, status: number, options: UsageTallyOptions): void {
  const operation = request.routeOptions.config.usage;
  if (operation === undefined) return;
  const outcome = outcomeOf(status, request.refusal);
  const principal =
    request.principal ?? (outcome === '5xx' ? options.knownPrincipal?.(request.headers.authorization) : undefined);
  if (principal === undefined) {
    options.onUnattributed?.(operation, outcome);
    return;
  }
  const counted = options.count({
    accountId: principal.accountId,
    accountName: principal.accountName,
    keyId: principal.keyId,
    operation,
    outcome,
    at: options.clock.now(),
  });
  if (!counted) options.onUncounted?.();
}

function outcomeOf(status: number, refusal: FastifyRequest['refusal']): UsageOutcome {
  if (refusal === 'key_banned') return 'banned';
  if (status === 429) return '429';
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  return '2xx';
}
