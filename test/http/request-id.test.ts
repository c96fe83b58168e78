import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/composition-root.ts';
import { errorOf, request, type HttpAnswer } from '../support/http-client.ts';
import { rawExchange } from '../support/raw-http.ts';
import { appForSuite } from '../support/suite-app.ts';

/**
 * X-Request-Id: the client's own id when fit (1 to 128 visible ASCII characters, sent once),
 * a new unique one otherwise, on every response, and in every log line of the request as `reqId`.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function idOf(answer: { readonly headers: Headers }): string {
  const id = answer.headers.get('x-request-id');
  assert.ok(id !== null, 'X-Request-Id must be present');
  return id;
}

/** Writes `lines` as a request head on a raw socket; the answer, once the server has answered and closed. */
function rawAnswerTo(url: string, lines: readonly string[]): Promise<string> {
  return rawExchange(url, `${lines.join('\r\n')}\r\n\r\n`, { encoding: 'latin1' });
}

function rawHeader(raw: string, name: string): string | undefined {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  const line = head.split('\r\n').find((candidate) => candidate.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

interface LogLine {
  readonly msg: string;
  readonly reqId?: string;
}

describe('X-Request-Id', () => {
  const lines: LogLine[] = [];
  const stream = { write: (line: string): void => void lines.push(JSON.parse(line) as LogLine) };
  const app = appForSuite({ logger: createLogger('debug', stream) });

  it("echoes the client's id, up to 128 visible ASCII characters", async () => {
    const { key } = await app.newKey();
    for (const sent of ['client-id-1', 'a', `${'x'.repeat(127)}~`, '!#$%&\'*+-.^_`|~"(),/:;<=>?@[\\]{}']) {
      const answer = await request(app, '/v1/pets', { key, headers: { 'x-request-id': sent } });
      assert.equal(answer.status, 200);
      assert.equal(idOf(answer), sent);
    }
  });

  it('makes a new unique id when the client sends none', async () => {
    const { key } = await app.newKey();
    const ids = new Set<string>();
    for (let i = 0; i < 50; i += 1) {
      const id = idOf(await request(app, '/v1/pets', { key }));
      assert.match(id, UUID);
      ids.add(id);
    }
    assert.equal(ids.size, 50);
  });

  it('replaces an unfit id (too long, space, control character, non-ASCII, empty) with a new one', async () => {
    const { key } = await app.newKey();
    for (const sent of ['y'.repeat(129), 'two words', 'tab\there', 'café', ' ']) {
      const answer = await request(app, '/v1/pets', { key, headers: { 'x-request-id': sent } });
      assert.equal(answer.status, 200, 'an unfit id is not an error');
      assert.match(idOf(answer), UUID, `${JSON.stringify(sent)} is replaced`);
    }
  });

  it('replaces an id sent twice', async () => {
    const { key } = await app.newKey();
    const raw = await rawAnswerTo(app.url, [
      'GET /v1/pets HTTP/1.1',
      'Host: petstore.test',
      `Authorization: Bearer ${key}`,
      'X-Request-Id: first',
      'X-Request-Id: second',
      'Connection: close',
    ]);
    assert.match(raw, /^HTTP\/1\.1 200 /);
    assert.match(rawHeader(raw, 'x-request-id') ?? '', UUID);
  });

  it('is on every error: 401, 404, 405, 413, 415, 429, and the raw-socket answers', async () => {
    const { key } = await app.newKey();
    const limited = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 10 });
    await request(app, '/v1/pets', { key: limited.key });
    const json = { 'content-type': 'application/json' };
    const answers: Array<[number, HttpAnswer]> = [
      [401, await request(app, '/v1/pets')],
      [404, await request(app, '/v1/nowhere', { key })],
      [405, await request(app, '/v1/pets/1', { method: 'DELETE', key })],
      [413, await request(app, '/v1/pets', { method: 'POST', key, headers: json, body: 'x'.repeat(20_000) })],
      [
        415,
        await request(app, '/v1/pets', { method: 'POST', key, headers: { 'content-type': 'text/plain' }, body: 'x' }),
      ],
      [429, await request(app, '/v1/pets', { key: limited.key })],
      [400, await request(app, '/v1/pets/%zz', { key })],
    ];
    for (const [status, answer] of answers) {
      assert.equal(answer.status, status, answer.text);
      errorOf(answer);
      assert.match(idOf(answer), UUID, `a generated id on the ${status}`);
    }
    const echoed = await request(app, '/v1/nowhere', { key, headers: { 'x-request-id': 'err-404' } });
    assert.equal(echoed.status, 404);
    assert.equal(idOf(echoed), 'err-404', "the client's id on an error too");

    const malformed = await rawAnswerTo(app.url, ['GET /v1/pets HTTP/9.9', 'Host: x']);
    assert.match(malformed, /^HTTP\/1\.1 400 /);
    assert.match(rawHeader(malformed, 'x-request-id') ?? '', UUID);
    const proxying = await rawAnswerTo(app.url, [
      'CONNECT example.com:443 HTTP/1.1',
      'Host: x',
      'X-Request-Id: conn-1',
    ]);
    assert.match(proxying, /^HTTP\/1\.1 405 /);
    assert.equal(rawHeader(proxying, 'x-request-id'), 'conn-1');
  });

  it('is in every log line of the request as reqId, the access line included', async () => {
    const { key } = await app.newKey();
    const from = lines.length;
    const answer = await request(app, '/v1/pets?limit=0', { key, headers: { 'x-request-id': 'trace-me-42' } });
    assert.equal(answer.status, 400);
    const deadline = Date.now() + 5000;
    while (!lines.slice(from).some((line) => line.msg === 'request')) {
      assert.ok(Date.now() < deadline, 'no access line');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const mine = lines.slice(from).filter((line) => line.reqId === 'trace-me-42');
    assert.deepEqual(
      mine.map((line) => line.msg),
      ['request refused', 'request'],
    );
    const generated = await request(app, '/v1/pets', { key });
    const id = idOf(generated);
    while (!lines.some((line) => line.reqId === id && line.msg === 'request')) {
      assert.ok(Date.now() < deadline, `no access line with the generated id ${id}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });
});
