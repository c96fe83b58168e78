import assert from 'node:assert/strict';
import { it } from 'node:test';
import { generateApiKey } from '../../src/auth/api-key.ts';
import { StorageUnavailableError } from '../../src/errors.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { request } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';

/**
 * Every answer of a usage operation counts somewhere: in its account's history when the account is
 * known, from the key's verification or, for a 5xx before it, from the answer this instance had for
 * the key before; otherwise in petstore_usage_unattributed_total, by operation and outcome.
 */
const START = Date.parse('2026-06-01T12:00:30Z');

describeEachBackend('answers without a verified key', (backend) => {
  // Every request looks its key up in storage, as one does once the cache's answer is a second old.
  const app = appForSuite({ backend, clock: new ManualClock(START), env: { KEY_CACHE_TTL_MS: '0' } });

  it("counts a 503 of a key lookup in the account's history when this instance knew the key", async () => {
    const known = await app.newKey();
    const unseen = await app.newKey();
    const knownId = await accountIdOf(known.account);
    const unseenId = await accountIdOf(unseen.account);
    assert.equal((await request(app, '/v1/pets', { key: known.key })).status, 200);
    const before = await unattributed();

    // Storage does not answer the key lookups; the store is not what is under test here.
    const keys = app.services.store.keys;
    const original = keys.findPrincipalByHash.bind(keys);
    keys.findPrincipalByHash = () =>
      Promise.reject(new StorageUnavailableError('storage is unavailable: it did not answer in time; retry later'));
    try {
      for (const key of [known.key, known.key, unseen.key]) {
        const answer = await request(app, '/v1/pets', { key });
        assert.equal(answer.status, 503, answer.text);
      }
      assert.equal((await request(app, '/v1/usage/history', { key: known.key })).status, 503);
    } finally {
      keys.findPrincipalByHash = original;
    }

    const range = app.services.usage.parseRange({});
    const history = await app.services.usage.history(knownId, range);
    assert.deepEqual(
      history.map((point) => [point.operation, point.outcome, point.count]),
      [
        ['listPets', '2xx', 1],
        ['listPets', '5xx', 2],
        ['usage', '5xx', 1],
      ],
    );
    assert.deepEqual(await app.services.usage.history(unseenId, range), []);
    assert.deepEqual(diff(before, await unattributed()), { 'listPets/5xx': 1 });
  });

  it('counts answers to requests without a valid key in the metric, by operation and outcome', async () => {
    const before = await unattributed();
    assert.equal((await request(app, '/v1/pets')).status, 401);
    assert.equal((await request(app, '/v1/pets', { key: generateApiKey() })).status, 401);
    assert.equal((await request(app, '/v1/usage', { key: generateApiKey() })).status, 401);
    assert.deepEqual(diff(before, await unattributed()), { 'listPets/4xx': 2, 'usage/4xx': 1 });
  });

  it('counts nothing in the metric for the answers of a verified key', async () => {
    const { key } = await app.newKey();
    const before = await unattributed();
    assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    assert.equal((await request(app, '/v1/pets?limit=0', { key })).status, 400);
    assert.deepEqual(diff(before, await unattributed()), {});
  });

  async function accountIdOf(name: string): Promise<number> {
    return (await app.services.accounts.findAccount(name))?.id as number;
  }

  async function unattributed(): Promise<Record<string, number>> {
    const { values } = await app.services.metrics.usageUnattributed.get();
    const totals: Record<string, number> = {};
    for (const sample of values) totals[`${sample.labels.operation}/${sample.labels.outcome}`] = sample.value;
    return totals;
  }
});

function diff(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const changed: Record<string, number> = {};
  for (const [name, value] of Object.entries(after)) {
    const delta = value - (before[name] ?? 0);
    if (delta !== 0) changed[name] = delta;
  }
  return changed;
}
