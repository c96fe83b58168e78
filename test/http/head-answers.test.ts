import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Gauge, Registry } from 'prom-client';
import { startOperatorListener, type OperatorListener } from '../support/operator-listener.ts';
import { appForSuite } from '../support/suite-app.ts';

/**
 * An answer to HEAD is a head alone (RFC 9110 §9.3.2), whatever its status and whoever writes it:
 * Fastify's replies, the raw answers to requests Node cannot parse, and the metrics listener. Read
 * from real sockets until the server closes them, so that a body sent after the head shows.
 */

interface HeadAnswer {
  readonly status: number;
  readonly headers: Map<string, string>;
  /** What came after the head: nothing, for an answer to HEAD. */
  readonly rest: string;
  /** Every byte the server sent on the connection. */
  readonly raw: string;
}

/** Writes `request` on a new connection and reads until the server closes it (or `ms` pass). */
function exchange(url: string, request: string, ms = 3000): Promise<HeadAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      const split = raw.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no answer head in ${JSON.stringify(raw)}`));
      const [statusLine = '', ...lines] = raw.slice(0, split).split('\r\n');
      const headers = new Map<string, string>();
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, rest: raw.slice(split + 4), raw });
    });
  });
}

function assertHeadOnly(answer: HeadAnswer, status: number): void {
  assert.equal(answer.status, status, answer.raw);
  assert.equal(answer.rest, '', `nothing after the head of a ${status} to HEAD: ${JSON.stringify(answer.raw)}`);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, answer.raw);
  // As Node and Fastify answer HEAD: the length of the body a GET would have had.
  assert.ok(Number(answer.headers.get('content-length')) > 0, answer.raw);
}

/** A GET's Error body length, to compare with the Content-Length of the HEAD. */
function bodyLength(answer: HeadAnswer): number {
  assert.ok(answer.rest.length > 0, `the GET has its body: ${answer.raw}`);
  return Buffer.byteLength(answer.rest, 'latin1');
}

describe('HEAD answers of the app carry no body', () => {
  const app = appForSuite({ env: { REQUEST_TIMEOUT_MS: '1000' } });
  let key: string;
  before(async () => ({ key } = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 1000 })));

  // The listener answers only the host names it serves: a loopback one here.
  const head = (method: string, path: string, lines = ''): string =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${lines}\r\n`;

  it('401, 404, 417 and 429 from the app', async () => {
    const unauthorized = await exchange(app.url, head('HEAD', '/v1/pets'));
    assertHeadOnly(unauthorized, 401);
    const unauthorizedGet = await exchange(app.url, head('GET', '/v1/pets'));
    assert.equal(Number(unauthorized.headers.get('content-length')), bodyLength(unauthorizedGet));

    const expectation = await exchange(app.url, head('HEAD', '/v1/pets', 'Expect: something\r\n'));
    assertHeadOnly(expectation, 417);

    // The key may make one request a minute: the first HEAD spends it.
    const authorized = `Authorization: Bearer ${key}\r\n`;
    assert.equal((await exchange(app.url, head('HEAD', '/v1/pets', authorized))).status, 200);
    assertHeadOnly(await exchange(app.url, head('HEAD', '/v1/pets', authorized)), 429);
    const { key: other } = await app.newKey();
    assertHeadOnly(await exchange(app.url, head('HEAD', '/v1/nope', `Authorization: Bearer ${other}\r\n`)), 404);
  });

  it('a request too malformed to parse: 400, the head alone, the GET body length', async () => {
    const malformed = (method: string): string => `${method} /v1/pets HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n`;
    const answer = await exchange(app.url, malformed('HEAD'));
    assertHeadOnly(answer, 400);
    assert.equal(answer.headers.get('connection'), 'close');
    const get = await exchange(app.url, malformed('GET'));
    assert.equal(get.status, 400);
    assert.equal(Number(answer.headers.get('content-length')), bodyLength(get));
  });

  it('a HEAD whose body never arrives is answered once, and the connection then closed', async () => {
    const slow = `HEAD /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 100\r\n\r\nabc`;
    const answer = await exchange(app.url, slow, 5000);
    assert.equal(answer.rest, '', `one answer, nothing after it: ${JSON.stringify(answer.raw)}`);
    assert.equal([...answer.raw.matchAll(/^HTTP\/1\.1 /gm)].length, 1, answer.raw);
  });
});

describe('HEAD answers of the metrics listener carry no body', () => {
  let listener: OperatorListener;
  let failing: OperatorListener;

  before(async () => {
    listener = await startOperatorListener({ registry: new Registry(), port: 0, host: '127.0.0.1' });
    const broken = new Registry();
    new Gauge({
      name: 'broken',
      help: 'fails to collect',
      registers: [broken],
      collect() {
        throw new Error('cannot collect');
      },
    });
    failing = await startOperatorListener({ registry: broken, port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await listener.close();
    await failing.close();
  });

  // The listener answers only the host names it serves: a loopback one here.
  const head = (method: string, path: string, lines = ''): string =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${lines}\r\n`;

  it('404, 503, 400, 417 and the 400 of a Host it does not serve', async () => {
    assertHeadOnly(await exchange(listener.url, head('HEAD', '/other')), 404);
    assertHeadOnly(await exchange(failing.url, head('HEAD', '/metrics')), 503);
    assertHeadOnly(await exchange(listener.url, 'HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nNo colon\r\n\r\n'), 400);
    assertHeadOnly(await exchange(listener.url, head('HEAD', '/metrics', 'Expect: something\r\n')), 417);
    const elsewhere = 'HEAD /metrics HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n';
    assertHeadOnly(await exchange(listener.url, elsewhere), 400);
    // The same refusals to GET carry the Error body.
    const refused = await exchange(listener.url, head('GET', '/metrics', 'Expect: something\r\n'));
    assert.equal(refused.status, 417);
    assert.deepEqual(JSON.parse(refused.rest), {
      code: 'expectation_failed',
      message: 'the expectation "something" is not supported; send no Expect header, or Expect: 100-continue',
      status: 417,
    });
  });
});
