import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PetstoreError, type UsageHistory } from '@petstore/client';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf } from './client-fixtures.ts';

/** The instant of the test app's manual clock, which no test here moves. */
const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const HOUR_MS = 3_600_000;
const iso = (ms: number): string => new Date(ms).toISOString();

describe('client: usage', async () => {
  const app = appForSuite();

  it('reads the account, windows, key state and deprecated calls without spending quota', async () => {
    const { key, keyId, account } = await app.newKey({ plan: 'enterprise', perMinute: 50, perDay: 400 });
    const client = clientOf(app, key);
    await client.pets.listPage();
    const usage = await client.usage();
    assert.deepEqual(usage.account, { name: account, plan: 'enterprise' });
    assert.deepEqual(
      [usage.windows.minute.limit, usage.windows.minute.remaining, usage.windows.day.remaining],
      [50, 49, 399],
    );
    assert.deepEqual([usage.key.id, usage.key.ban], [keyId, null]);
    assert.deepEqual(usage.key.scopes, ['pets:read', 'pets:write', 'usage:read'], 'a key issued without a choice');
    assert.deepEqual(
      usage.deprecated?.map((entry) => [entry.operation, entry.sunset, entry.calls, entry.lastCall, entry.keys]),
      [['getPet', '2030-12-05T00:00:00.000Z', 0, null, []]],
    );
  });

  it("shows the key's scopes, as they were chosen when it was issued", async () => {
    const { key } = await app.newKey({ scopes: ['usage:read', 'pets:read'] });
    const client = clientOf(app, key);
    const scopes: ReadonlyArray<'pets:read' | 'pets:write' | 'usage:read' | 'keys:manage'> = (await client.usage()).key
      .scopes;
    assert.deepEqual(scopes, ['pets:read', 'usage:read']);
  });

  it('reads the history of the account, from Dates or strings, with ISO 8601 times', async () => {
    const { key } = await app.newKey();
    const client = clientOf(app, key);
    await client.pets.listPage();
    await client.pets.listPage();
    const hourly: UsageHistory = await client.usage.history({
      from: new Date(NOW - HOUR_MS),
      to: '2026-06-01T13:00:00Z',
      granularity: 'hour',
    });
    assert.deepEqual(hourly, {
      from: iso(NOW - HOUR_MS),
      to: iso(NOW + HOUR_MS),
      granularity: 'hour',
      points: [{ at: iso(NOW), operation: 'listPets', outcome: '2xx', count: 2 }],
    });
    const daily = await client.usage.history({ granularity: 'day' });
    assert.equal(daily.granularity, 'day');
    assert.deepEqual(
      daily.points.map((point) => [point.operation, point.count]),
      [
        ['listPets', 2],
        ['usage', 1],
      ],
    );
  });

  it("refuses an invalid Date before sending, and throws the service's 400 for a bad range", async () => {
    const { key } = await app.newKey();
    const client = clientOf(app, key);
    await assert.rejects(client.usage.history({ from: new Date('not a date') }), {
      name: 'TypeError',
      message: 'from is an invalid Date',
    });
    await assert.rejects(
      client.usage.history({ from: '2026-06-01', to: '2026-05-01' }),
      (error: unknown) => error instanceof PetstoreError && error.status === 400 && error.code === 'invalid_query',
    );
  });
});
