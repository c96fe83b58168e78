import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MID } from '../ratelimit/rate-limit-assertions.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request } from '../support/http-client.ts';
import {
  LEAP_DAY,
  NONEXISTENT_INSTANTS,
  PAST_90_DAYS_ONCE_WIDENED,
  WIDENED_TO_90_DAYS,
} from '../support/usage-ranges.ts';
import { adminApiForSuite, DAY_MS, ok, type History } from './admin-calls.ts';

/**
 * The usage views of the admin API (docs/operations.md, "Admin API"): an account's last 30 days and
 * deprecated calls, the histories, the top accounts and the deprecated operation's callers, and the
 * ranges and dates they refuse.
 */

describeEachBackend('the admin API: usage', (backend) => {
  const { app, clock, admin, newAccount, newKey } = adminApiForSuite(backend);

  it("usage: an account's last 30 days and deprecated calls, histories, the top accounts, the callers", async () => {
    clock.set(MID);
    const name = await newAccount('pro');
    const { key, id } = await newKey(name);
    const created = await request(app.publicApp, '/v1/pets', {
      key,
      method: 'POST',
      json: { name: 'Rex', categoryId: 1 },
    });
    assert.equal(created.status, 201, created.text);
    const petId = created.json<{ id: number }>().id;
    assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    assert.equal((await request(app.publicApp, `/v1/pets/${petId}`, { key })).status, 200);
    assert.equal((await request(app.publicApp, '/v1/pets/999999999', { key })).status, 404);

    const usage = ok<{
      account: string;
      last30Days: { requests: number; refusals: number };
      deprecated: Array<{ operation: string; calls: number; lastCall: string | null; keys: unknown[] }>;
    }>(await admin(`/admin/v1/accounts/${name}/usage`));
    assert.equal(usage.account, name);
    assert.deepEqual(usage.last30Days, { requests: 4, refusals: 0 });
    assert.equal(usage.deprecated.length, 1);
    assert.equal(usage.deprecated[0]?.operation, 'getPet');
    assert.equal(usage.deprecated[0]?.calls, 2);
    assert.deepEqual(usage.deprecated[0]?.keys, [{ id, calls: 2, lastCall: new Date(MID).toISOString() }]);

    const hour = new Date(MID - (MID % 3_600_000)).toISOString();
    const history = ok<History>(await admin(`/admin/v1/accounts/${name}/usage/history`));
    assert.equal(history.granularity, 'hour');
    assert.deepEqual(history.points, [
      { at: hour, operation: 'createPet', outcome: '2xx', count: 1 },
      { at: hour, operation: 'getPet', outcome: '2xx', count: 1 },
      { at: hour, operation: 'getPet', outcome: '4xx', count: 1 },
      { at: hour, operation: 'listPets', outcome: '2xx', count: 1 },
    ]);
    const daily = ok<History>(await admin(`/admin/v1/accounts/${name}/usage/history?granularity=day&from=2026-05-20`));
    assert.equal(daily.from, '2026-05-20T00:00:00.000Z');
    assert.equal(
      daily.points.reduce((sum, point) => sum + point.count, 0),
      4,
    );

    const everyone = ok<History>(await admin('/admin/v1/usage/history'));
    const listPets = everyone.points.find((point) => point.operation === 'listPets' && point.outcome === '2xx');
    assert.ok((listPets?.count ?? 0) >= 1, 'the history of every account holds this one');

    const top = ok<{ by: string; accounts: Array<{ account: string; requests: number; refusals: number }> }>(
      await admin('/admin/v1/usage/top?by=requests&limit=100'),
    );
    assert.equal(top.by, 'requests');
    assert.deepEqual(
      top.accounts.find((account) => account.account === name),
      { account: name, requests: 4, refusals: 0 },
    );

    const callers = ok<{ operation: string; sunset: string; since: string; callers: unknown[] }>(
      await admin('/admin/v1/deprecated-callers'),
    );
    assert.equal(callers.operation, 'getPet');
    assert.equal(callers.sunset, '2030-12-05T00:00:00.000Z');
    assert.equal(callers.since, new Date(MID - 30 * DAY_MS).toISOString());
    assert.ok(
      callers.callers.some(
        (caller) =>
          JSON.stringify(caller) ===
          JSON.stringify({ account: name, keyId: id, calls: 2, lastCall: new Date(MID).toISOString() }),
      ),
      JSON.stringify(callers.callers),
    );

    for (const query of [
      'granularity=week',
      'from=yesterday',
      'from=2026-06-02&to=2026-06-01',
      'from=2026-01-01&to=2026-06-01',
    ]) {
      assertError(await admin(`/admin/v1/usage/history?${query}`), 400, 'invalid_query');
      assertError(await admin(`/admin/v1/accounts/${name}/usage/history?${query}`), 400, 'invalid_query');
    }
    for (const query of ['by=money', 'limit=0', 'limit=101', 'limit=ten', 'from=soon']) {
      assertError(await admin(`/admin/v1/usage/top?${query}`), 400, 'invalid_query');
    }
    assertError(await admin('/admin/v1/accounts/nobody-here/usage'), 404, 'not_found');
    assertError(await admin('/admin/v1/accounts/nobody-here/usage/history'), 404, 'not_found');
  });

  it('usage histories refuse dates and times that do not exist and ranges over 90 days once widened', async () => {
    clock.set(MID);
    const name = await newAccount();
    for (const path of ['/admin/v1/usage/history', `/admin/v1/accounts/${name}/usage/history`]) {
      for (const [query, ...mentions] of [...NONEXISTENT_INSTANTS, ...PAST_90_DAYS_ONCE_WIDENED])
        assertError(await admin(`${path}?${query}`), 400, 'invalid_query', ...mentions);
      assert.equal(ok<History>(await admin(`${path}?${LEAP_DAY.query}`)).from, LEAP_DAY.from);
      const longest = ok<History>(await admin(`${path}?${WIDENED_TO_90_DAYS.query}`));
      assert.deepEqual([longest.from, longest.to], [WIDENED_TO_90_DAYS.from, WIDENED_TO_90_DAYS.to]);
    }
    for (const [query, ...mentions] of NONEXISTENT_INSTANTS)
      assertError(await admin(`/admin/v1/usage/top?${query}`), 400, 'invalid_query', ...mentions);
  });
});
