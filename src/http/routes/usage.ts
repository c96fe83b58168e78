import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static } from 'typebox';
import type { WindowState } from '../../ratelimit/limiter.ts';
import type { Standing } from '../../ratelimit/rate-limit-policy.ts';
import type { KeyPrincipal } from '../../storage/store.ts';
import { PLANS } from '../../storage/store.ts';
import { errorResponses, headerRefs, RESPONSE_HEADERS, RATE_LIMIT_HEADERS } from '../openapi-responses.ts';

const UsageWindowSchema = (name: string) =>
  Type.Object(
    {
      limit: Type.Integer({ minimum: 0, description: `Requests allowed per ${name}.` }),
      remaining: Type.Integer({ minimum: 0, description: 'Requests left now; this call spent none.' }),
      reset: Type.Integer({ minimum: 0, description: 'Unix time, in seconds, when the window resets.' }),
    },
    { additionalProperties: false, description: `The UTC-${name} window of the account.` },
  );

const Instant = (description: string) => Type.String({ format: 'date-time', description });

export const UsageSchema = Type.Object(
  {
    account: Type.Object(
      {
        name: Type.String({ description: "The account's unique name." }),
        plan: Type.Enum(PLANS, { type: 'string', description: 'The plan that sets the limits.' }),
      },
      { additionalProperties: false },
    ),
    windows: Type.Object(
      { minute: UsageWindowSchema('minute'), day: UsageWindowSchema('day') },
      { additionalProperties: false },
    ),
    key: Type.Object(
      {
        id: Type.String({ description: "The key's non-secret id, as `key list` shows it." }),
        expiresAt: Type.Union([Instant('When the key stops working.'), Type.Null()]),
        ban: Type.Union([
          Type.Object(
            {
              until: Instant('When the ban ends.'),
              retryAfter: Type.Integer({ minimum: 1, description: 'Seconds until the ban ends.' }),
            },
            { additionalProperties: false },
          ),
          Type.Null(),
        ]),
      },
      { additionalProperties: false, description: 'The key of this request.' },
    ),
  },
  {
    $id: 'Usage',
    additionalProperties: false,
    description: "Where the caller's account and key stand; reading it spends none of the account's quota.",
  },
);

export type Usage = Static<typeof UsageSchema>;

const UsageRef = Type.Unsafe<Usage>(Type.Ref('Usage'));

export const USAGE_EXAMPLE: Usage = {
  account: { name: 'demo', plan: 'free' },
  windows: {
    minute: { limit: 60, remaining: 57, reset: 1795000020 },
    day: { limit: 1000, remaining: 940, reset: 1795046400 },
  },
  key: { id: 'key_3kq9x2m7w1', expiresAt: '2027-01-01T00:00:00.000Z', ban: null },
};

/** GET /v1/usage: the account's standing, reported by the limits step (src/http/limits-step.ts). */
export const usageRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    '/v1/usage',
    {
      config: { reportsStanding: true },
      schema: {
        operationId: 'getUsage',
        tags: ['usage'],
        summary: "Your account's limits and your key's state",
        description:
          "The account's plan, both windows (limit, what is left now, reset) and this key's expiry and ban. " +
          "It is not counted in the account's windows: calling it spends no quota, and the rate-limit headers " +
          'are those a pets request would carry, without its spending. It answers while the key is banned ' +
          '(this is where the ban shows). It has a small limit of its own per account (default 30 per minute); ' +
          'past it, 429 `rate_limited` with `Retry-After`, and the rate-limit headers describe that limit.',
        response: {
          200: {
            description: 'The standing of the account and key.',
            headers: headerRefs(...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS),
            content: { 'application/json': { schema: UsageRef, example: USAGE_EXAMPLE } },
          },
          ...errorResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      const { principal, standing } = request;
      // Both are set before any handler runs; their absence is a wiring fault, answered as a 500.
      if (principal === undefined || standing === undefined)
        throw new Error('GET /v1/usage ran without its limits step');
      return reply.send(usageOf(principal, standing));
    },
  );
};

function usageOf(principal: KeyPrincipal, standing: Standing): Usage {
  const { ban } = standing;
  return {
    account: { name: principal.accountName, plan: principal.plan },
    windows: { minute: windowOf(standing, 'minute'), day: windowOf(standing, 'day') },
    key: {
      id: principal.keyId,
      expiresAt: principal.expiresAt === null ? null : new Date(principal.expiresAt).toISOString(),
      ban: ban === null ? null : { until: new Date(ban.until).toISOString(), retryAfter: ban.retryAfterSeconds },
    },
  };
}

function windowOf(standing: Standing, name: string): Usage['windows']['minute'] {
  const window = standing.windows.find((candidate) => candidate.name === name) as WindowState;
  return { limit: window.limit, remaining: window.remaining, reset: Math.ceil(window.resetAt / 1000) };
}
