import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { FuzzTally, MESSAGE_MAX_CHARS, fuzzProperty, startFuzzTarget, type FuzzTarget } from '../support/fuzz-model.ts';
import { errorOf, request, type HttpRequest } from '../support/http-client.ts';

/**
 * A fixed-seed sample of the fuzz model (test/support/fuzz-model.ts) over real HTTP; `npm run fuzz`
 * runs the long campaign with every input class.
 */
const RUNS = 3000;
const SEED = 20261123;
const CASE_TIMEOUT_MS = 3000;

describe('fuzz sample over real HTTP (SQLite)', () => {
  let target: FuzzTarget;
  const tally = new FuzzTally();

  before(async () => {
    target = await startFuzzTarget();
  });
  after(async () => {
    await target.app.close();
  });

  it(`${RUNS} generated requests: 2xx or a listed Error body; no 5xx but 503, 501 to unknown methods`, async () => {
    const property = fuzzProperty(target, tally, { timeoutMs: CASE_TIMEOUT_MS });
    await fc.assert(property, { numRuns: RUNS, seed: SEED });
    console.log(tally.summary());
  });

  it('the sample reached validation, creation and both rate-limit answers', () => {
    for (const code of ['invalid_body', 'invalid_json', 'invalid_query', 'invalid_path', 'unauthorized']) {
      assert.ok((tally.codes.get(code) ?? 0) > 0, `some answer was ${code}`);
    }
    assert.ok((tally.statuses.get('201') ?? 0) > 100, 'pets were created');
    assert.ok((tally.codes.get('rate_limited') ?? 0) > 0, 'the limited key was refused with rate_limited');
    assert.ok((tally.codes.get('key_banned') ?? 0) > 0, 'the limited key was then banned');
  });

  // Found by this suite: messages quoted kilobytes of input (paths, field names, headers, query values).
  it('an Error message quotes long input only in part', async () => {
    const key = target.keys.unlimited;
    const json = { 'content-type': 'application/json' };
    const long = 'z'.repeat(3000);
    const cases: Array<[string, HttpRequest]> = [
      [`/v1/${long}`, { key }],
      [`/v1/pets?cursor=${long}`, { key }],
      [`/v1/pets?limit=${'9'.repeat(3000)}`, { key }],
      ['/v1/pets', { key, method: 'POST', headers: json, body: `{"${long}":1,"name":"a","categoryId":1}` }],
      ['/v1/pets', { key, method: 'POST', headers: { ...json, 'idempotency-key': 'k '.repeat(1000) }, body: '{}' }],
      ['/v1/pets', { key, method: 'POST', headers: { 'content-type': `text/${long}` }, body: '{}' }],
      ['/v1/pets', { key, method: 'POST', headers: { ...json, 'content-encoding': long }, body: '{}' }],
    ];
    for (const [path, options] of cases) {
      const error = errorOf(await request(target.app, path, options));
      assert.ok(error.message.length <= MESSAGE_MAX_CHARS, `${error.code}: ${error.message.length} characters`);
    }
  });

  it('the app still answers /healthz after the run', async () => {
    const answer = await request(target.app, '/healthz');
    assert.equal(answer.status, 200);
  });
});
