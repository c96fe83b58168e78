import assert from 'node:assert/strict';
import { once } from 'node:events';
import { before, describe, it } from 'node:test';
import type { PetstoreError } from '@petstore/client';
import { PetstoreClient, type Fetch } from '@petstore/client';
import { errorOf, request } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf, petstoreErrorOf, recordingFetch, recordingSleep } from './client-fixtures.ts';

/** Every non-2xx answer becomes a PetstoreError carrying the service's Error body and request id. */

const clock = new ManualClock(new Date('2026-06-01T12:00:00Z'));

/**
 * The error names the answer's X-Request-Id. The service sends one on every answer; until a build
 * that does, an absent header must leave requestId undefined.
 */
function assertRequestId(error: PetstoreError, recorder: ReturnType<typeof recordingFetch>): void {
  const answered = recorder.requestIds.at(-1);
  assert.ok(answered, 'the answer carries X-Request-Id');
  assert.equal(error.requestId, answered);
}

describe('client: errors', () => {
  const app = appForSuite({ clock, env: { BAN_THRESHOLD: '1' } });
  let key: string;
  let recorder: ReturnType<typeof recordingFetch>;
  let client: PetstoreClient;

  before(async () => {
    ({ key } = await app.newKey());
    recorder = recordingFetch();
    client = clientOf(app, key, { fetch: recorder.fetch });
  });

  it('refuses a baseUrl that does not end in /v1', () => {
    for (const baseUrl of [app.url, `${app.url}/v2`, `${app.url}/v1?x=1`]) {
      assert.throws(() => new PetstoreClient({ baseUrl, apiKey: key }), TypeError, baseUrl);
    }
    assert.doesNotThrow(() => new PetstoreClient({ baseUrl: `${app.url}/v1/`, apiKey: key }));
  });

  it('400 invalid_body', async () => {
    const error = await petstoreErrorOf(client.pets.create({ name: '', categoryId: 1 }));
    assert.deepEqual([error.status, error.code], [400, 'invalid_body']);
    assert.match(error.message, /name/);
    assert.equal(error.retryAfter, undefined);
    assertRequestId(error, recorder);
  });

  it('401 unauthorized', async () => {
    const stranger = recordingFetch();
    const anonymous = clientOf(app, 'pst_wrong', { fetch: stranger.fetch });
    const error = await petstoreErrorOf(anonymous.pets.listPage());
    assert.deepEqual([error.status, error.code], [401, 'unauthorized']);
    assert.ok(error.message.length > 0);
    assertRequestId(error, stranger);
  });

  it('404 not_found', async () => {
    // The process's first deprecated answer: the warning then reads the usage through this client's fetch.
    const warned = once(process, 'warning');
    const error = await petstoreErrorOf(client.pets.get(987654321));
    assert.deepEqual([error.status, error.code], [404, 'not_found']);
    assert.match(error.message, /987654321/);
    assertRequestId(error, recorder);
    // Settled before the next test reads the recorder.
    await warned;
  });

  it('413 payload_too_large', async () => {
    const error = await petstoreErrorOf(client.pets.create({ name: 'x'.repeat(17_000), categoryId: 1 }));
    assert.deepEqual([error.status, error.code], [413, 'payload_too_large']);
    assertRequestId(error, recorder);
  });

  it('403 insufficient_scope: a read-only key may list but not create; the error names the scope', async () => {
    const { key: readOnly } = await app.newKey({ scopes: ['pets:read'] });
    const own = recordingFetch();
    const reader = clientOf(app, readOnly, { fetch: own.fetch });
    await reader.pets.listPage({ limit: 1 });
    const error = await petstoreErrorOf(reader.pets.create({ name: 'Rex', categoryId: 1 }));
    assert.ok(error.code === 'insufficient_scope', error.code);
    const refused: PetstoreError<'insufficient_scope'> = error;
    assert.equal(refused.status, 403);
    assert.match(refused.message, /needs the scope 'pets:write', and the key has pets:read$/);
    assert.equal(refused.retryAfter, undefined);
    assert.equal(own.requests.length, 2, 'the creation was sent once: a 403 is not retried');
    assertRequestId(refused, own);
  });

  it('429 key_banned is never retried', async () => {
    const { key: banned } = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    // The one request of the minute, then requests past the 429 until the key is banned (threshold 1).
    let answer = await request(app, '/v1/pets', { key: banned });
    for (let i = 0; i < 20 && (answer.status === 200 || errorOf(answer).code !== 'key_banned'); i += 1) {
      answer = await request(app, '/v1/pets', { key: banned });
    }
    assert.equal(errorOf(answer).code, 'key_banned');
    const own = recordingFetch();
    const waits = recordingSleep();
    const bannedClient = clientOf(app, banned, {
      fetch: own.fetch,
      sleep: waits.sleep,
      maxRetryDelayMs: 24 * 3600 * 1000,
    });
    const error = await petstoreErrorOf(bannedClient.pets.listPage());
    assert.deepEqual([error.status, error.code], [429, 'key_banned']);
    assert.ok(error.retryAfter !== undefined && error.retryAfter > 0, `retryAfter ${error.retryAfter}`);
    assert.equal(own.requests.length, 1, 'one request, no retry');
    assert.deepEqual(waits.delays, []);
    assertRequestId(error, own);
  });

  it('429 rate_limited always says how long to wait: 1 s when its Retry-After cannot be read', async () => {
    const { key: limited } = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    assert.equal((await request(app, '/v1/pets', { key: limited })).status, 200, 'another program spends the minute');
    // What a page gets from a deployment whose CORS settings do not expose Retry-After.
    const hidingRetryAfter: Fetch = async (input, init) => {
      const response = await fetch(input, init);
      const headers = new Headers(response.headers);
      headers.delete('retry-after');
      return new Response(await response.arrayBuffer(), { status: response.status, headers });
    };
    const limitedClient = clientOf(app, limited, { fetch: hidingRetryAfter, maxRetries: 0 });
    const error = await petstoreErrorOf(limitedClient.pets.listPage());
    assert.ok(error.code === 'rate_limited', error.code);
    const seconds: number = error.retryAfter;
    assert.deepEqual([error.status, seconds], [429, 1]);
  });

  it('410 gone after the sunset (last: it moves the clock)', async () => {
    const pet = await client.pets.create({ name: 'before the sunset', categoryId: 1 });
    clock.set(new Date('2030-12-05T00:00:00Z'));
    const error = await petstoreErrorOf(client.pets.get(pet.id));
    assert.deepEqual([error.status, error.code], [410, 'gone']);
    assertRequestId(error, recorder);
  });
});
