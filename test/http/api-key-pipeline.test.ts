import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDependencies } from '../../src/http/app.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { MID } from '../ratelimit/rate-limit-assertions.ts';

/**
 * The API key pipeline (src/http/plugins/api-key-pipeline.ts) wired without limits, as an app built
 * with no `limits` is: keys are verified, scopes enforced and answers tallied as with a limiter, the
 * same refusals are sent, and nothing is counted against a window. The suites of test/auth/api-keys.test.ts,
 * test/auth/key-scopes.test.ts and test/ratelimit/ hold the pipeline with its limits.
 */

const HISTORY_OF_THE_HOUR = '/v1/usage/history?from=2026-06-01T12:00:00Z&to=2026-06-01T13:00:00Z';
const NEW_PET = { name: 'Rex', categoryId: 3 };

/** The services of `app`, without its limits. */
function withoutLimits({ services }: TestApp): AppDependencies {
  const { config, clock, keyVerifier, pets, holderKeys, metrics, readiness, logger, usage, tally, quotas } = services;
  return { config, clock, keyVerifier, pets, holderKeys, metrics, readiness, logger, usage, tally, quotas };
}

function assertNotCounted(answer: HttpAnswer): void {
  assert.equal(answer.headers.get('x-ratelimit-limit'), null, 'no rate-limit fields without limits');
  assert.equal(answer.headers.get('ratelimit'), null, 'no rate-limit fields without limits');
}

describeEachBackend('the API key pipeline without limits', (backend) => {
  let limited: TestApp;
  let unlimited: FastifyInstance;
  let target: { url: string };

  before(async () => {
    limited = await startTestApp({ backend, clock: new ManualClock(MID) });
    unlimited = await buildApp(withoutLimits(limited));
    target = { url: await unlimited.listen({ port: 0, host: '127.0.0.1' }) };
  });
  after(async () => {
    await unlimited.close();
    await limited.close();
  });

  it('answers a request without a key, or with a key that fails verification, 401 with the challenge', async () => {
    const missing = await request(target, '/v1/pets');
    assertError(missing, 401, 'unauthorized');
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="petstore"');
    assertNotCounted(missing);
    const { key, keyId } = await limited.newKey();
    await limited.services.accounts.revokeKey(keyId);
    const revoked = await request(target, '/v1/pets', { key });
    assertError(revoked, 401, 'unauthorized');
    assert.match(revoked.headers.get('www-authenticate') ?? '', /^Bearer realm="petstore", error="invalid_token"/);
    assertNotCounted(revoked);
  });

  it('answers a key without the route’s scope 403 insufficient_scope, and lets a key with it through', async () => {
    const { key } = await limited.newKey({ scopes: ['pets:read'] });
    const refused = await request(target, '/v1/pets', { method: 'POST', key, json: NEW_PET });
    assertError(refused, 403, 'insufficient_scope', "'pets:write'");
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="pets:write"/);
    assertNotCounted(refused);
    const listed = await request(target, '/v1/pets', { key });
    assert.equal(listed.status, 200, listed.text);
    assertNotCounted(listed);
  });

  it('counts nothing against the windows, and tallies every answer for the usage history', async () => {
    const { key, account } = await limited.newKey({ plan: 'enterprise', perMinute: 1, perDay: 1 });
    for (let i = 0; i < 3; i += 1) assert.equal((await request(target, '/v1/pets', { key })).status, 200);
    await limited.services.usageFlusher.flush();
    const reader = (await limited.services.accounts.createKey(account)).key;
    const history = await request(limited, HISTORY_OF_THE_HOUR, { key: reader });
    assert.equal(history.status, 200, history.text);
    assert.deepEqual(history.json<{ points: unknown[] }>().points, [
      { at: new Date(Date.UTC(2026, 5, 1, 12)).toISOString(), operation: 'listPets', outcome: '2xx', count: 3 },
    ]);
  });
});
