import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PetstoreClient } from '@petstore/client';
import { startTestApp, type TestApp } from '../support/test-app.ts';

describe('client: usage', async () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  it('reads the account, windows and key state without spending quota', async () => {
    const { key, keyId, account } = await app.newKey({ plan: 'enterprise', perMinute: 50, perDay: 400 });
    const client = new PetstoreClient({ baseUrl: `${app.url}/v1`, apiKey: key });
    await client.pets.listPage();
    const usage = await client.usage();
    assert.deepEqual(usage.account, { name: account, plan: 'enterprise' });
    assert.deepEqual(
      [usage.windows.minute.limit, usage.windows.minute.remaining, usage.windows.day.remaining],
      [50, 49, 399],
    );
    assert.deepEqual([usage.key.id, usage.key.ban], [keyId, null]);
  });
});
