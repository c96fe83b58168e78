import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEPRECATION_WARNING_CODE, DEPRECATION_WARNING_TYPE, PetstoreClient } from '@petstore/client';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/** getPet's deprecation is told once per process, however many clients and calls; this file owns that process. */

describe('client: deprecation warning of pets.get', () => {
  let app: TestApp;
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => {
    if (warning.name === DEPRECATION_WARNING_TYPE) warnings.push(warning);
  };

  before(async () => {
    app = await startTestApp();
    process.on('warning', onWarning);
  });
  after(async () => {
    process.off('warning', onWarning);
    await app.close();
  });

  it('warns exactly once, naming the sunset, the replacement and the migration note', async () => {
    const { key } = await app.newKey();
    const first = new PetstoreClient({ baseUrl: `${app.url}/v1`, apiKey: key });
    const second = new PetstoreClient({ baseUrl: `${app.url}/v1`, apiKey: key });
    const pet = await first.pets.create({ name: 'Rex', categoryId: 3 });
    assert.deepEqual(await first.pets.get(pet.id), pet);
    await first.pets.get(pet.id);
    await second.pets.get(pet.id);
    await second.pets.get(pet.id + 1).catch(() => undefined);
    // process.emitWarning delivers on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(warnings.length, 1, warnings.map((warning) => warning.message).join('\n'));
    const [warning] = warnings;
    assert.equal((warning as Error & { code?: string }).code, DEPRECATION_WARNING_CODE);
    assert.match(warning?.message ?? '', /Thu, 05 Dec 2030 00:00:00 GMT/);
    assert.match(warning?.message ?? '', /GET \/v1\/pets with the status filter/);
    assert.ok(warning?.message.includes(`${app.url}/docs#/pets/getPet`), warning?.message);
  });
});
