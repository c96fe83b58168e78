import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { before, describe, it } from 'node:test';
import { appForSuite } from './support/suite-app.ts';

/**
 * Graceful shutdown seen from a connection that is busy when it starts: the request in flight
 * completes, and a request pipelined behind it, which arrives once the app is closing, gets 503
 * with the Error body and `Connection: close`, so the client retries elsewhere.
 */
describe('shutdown', () => {
  const app = appForSuite();
  let key: string;
  before(async () => ({ key } = await app.newKey()));

  it('finishes the request in flight and refuses the next one on that connection with 503', async () => {
    const { port } = new URL(app.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const received = collect(socket);
    const body = JSON.stringify({ name: 'Late', categoryId: 1 });
    const head = (method: string, path: string, extra: string): string =>
      `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n${extra}\r\n`;
    // The first request waits for 100 Continue before its body, so it is in flight when closing starts.
    const json = `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n`;
    socket.write(head('POST', '/v1/pets', json));
    await received.continued;
    const closing = app.app.close();
    // close() runs its preClose hooks on a later turn; give it that turn before the next request.
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write(body + head('GET', '/v1/pets', ''));
    const text = await received.all;
    await closing;

    const responses = text.split(/(?=HTTP\/1\.1 )/);
    assert.equal(responses.length, 3, `100, 201 and 503 on the connection, got: ${text.slice(0, 500)}`);
    assert.match(responses[0] ?? '', /^HTTP\/1\.1 100 /);
    assert.match(responses[1] ?? '', /^HTTP\/1\.1 201 /);
    assert.match(responses[1] ?? '', /"name":"Late"/);
    const [late, lateBody] = (responses[2] ?? '').split('\r\n\r\n');
    assert.match(late ?? '', /^HTTP\/1\.1 503 /);
    assert.match(late ?? '', /\r\nconnection: close\r\n/i);
    assert.deepEqual(JSON.parse(lateBody ?? ''), {
      code: 'service_unavailable',
      message: 'the service is shutting down; retry the request',
      status: 503,
    });
  });
});

/** When the server has sent `100 Continue`, and everything it sends until it closes the connection. */
function collect(socket: Socket): { continued: Promise<unknown>; all: Promise<string> } {
  const continued = Promise.withResolvers<boolean>();
  const all = Promise.withResolvers<string>();
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
    if (text.startsWith('HTTP/1.1 100 ')) continued.resolve(true);
  });
  socket.once('error', all.reject);
  socket.once('close', () => all.resolve(text));
  return { continued: continued.promise, all: all.promise };
}
