import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LINGER_MS } from '../../src/net/closing-connections.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Connections the service has answered for the last time are closed within a moment, whatever the
 * client does next: a client that keeps sending a refused body, or keeps its side of the connection
 * open after a malformed request, holds neither a socket nor a graceful shutdown.
 */
/** A chunk announced at 256 KiB, barely begun: the refusal (no key) comes before the body is in. */
const REFUSED_UPLOAD_START =
  'POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
  'Transfer-Encoding: chunked\r\n\r\n40000\r\n' +
  'x'.repeat(1000);

describe('closing answered connections', () => {
  const app = appForSuite();

  it('closes a refused upload’s connection while the client keeps sending its body', async () => {
    const client = await openClient(app.url);
    client.socket.write(REFUSED_UPLOAD_START);
    assert.match(await client.head(), /^HTTP\/1\.1 401 /);
    const trickle = setInterval(() => client.socket.writable && client.socket.write('x'.repeat(1000)), 50);
    try {
      assert.ok(await client.closedWithin(3000), 'the server closed the connection');
    } finally {
      clearInterval(trickle);
      client.socket.destroy();
    }
  });

  it('keeps the connection of a refused request whose body arrived with it', async () => {
    const client = await openClient(app.url);
    const body = '{"name":"Rex","categoryId":1}';
    client.socket.write(
      'POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    try {
      assert.match(await client.head(), /^HTTP\/1\.1 401 /);
      await assertServesAfterLinger(client);
    } finally {
      client.socket.destroy();
    }
  });

  it('keeps the connection of a refused upload whose rest arrives soon after the answer', async () => {
    const client = await openClient(app.url);
    client.socket.write(
      'POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n4000\r\n' +
        'x'.repeat(1000),
    );
    try {
      assert.match(await client.head(), /^HTTP\/1\.1 401 /);
      client.socket.write('x'.repeat(0x4000 - 1000) + '\r\n0\r\n\r\n');
      await assertServesAfterLinger(client);
    } finally {
      client.socket.destroy();
    }
  });

  it('keeps nothing per refusal on a kept connection whose bodies arrive after their answers', async () => {
    const serverSockets: Socket[] = [];
    const onConnection = (socket: Socket): number => serverSockets.push(socket);
    app.app.server.on('connection', onConnection);
    const client = await openClient(app.url);
    app.app.server.off('connection', onConnection);
    const body = '{"name":"Rex","categoryId":1}';
    try {
      for (let index = 1; index <= 15; index += 1) {
        client.socket.write(
          'POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
            `Content-Length: ${body.length}\r\n\r\n`,
        );
        assert.match(await client.head(index), /^HTTP\/1\.1 401 /);
        client.socket.write(body);
      }
      await sleep(50);
      const [socket] = serverSockets;
      assert.ok(socket !== undefined && !socket.destroyed, 'the connection is still open');
      assert.ok(socket.listenerCount('close') < 5, `close listeners: ${socket.listenerCount('close')}`);
    } finally {
      client.socket.destroy();
    }
  });

  for (const [kind, bytes] of [
    ['no request line', 'GARBAGE\r\n\r\n'],
    ['headers too large', `GET /v1/pets HTTP/1.1\r\nX: ${'a'.repeat(64 * 1024)}`],
    ['a malformed chunk', 'POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n'],
  ]) {
    it(`lets go of the connection after answering ${kind}, when the client keeps its side open`, async () => {
      assert.ok(await countReaches(app, 0, 3000), 'no connection left from earlier tests');
      const client = await openClient(app.url);
      client.socket.write(bytes ?? '');
      assert.match(await client.head(), /^HTTP\/1\.1 4\d\d /);
      try {
        assert.ok(await countReaches(app, 0, 3000), 'the server let go of the connection');
      } finally {
        client.socket.destroy();
      }
    });
  }

  it('finishes a graceful shutdown while a client holds a refused upload open', async () => {
    const closing = await startTestApp();
    const client = await openClient(closing.url);
    client.socket.write(REFUSED_UPLOAD_START);
    assert.match(await client.head(), /^HTTP\/1\.1 401 /);
    try {
      const closed = closing.close().then(() => true);
      assert.equal(await Promise.race([closed, sleep(5000, false)]), true, 'close() finished within 5 s');
    } finally {
      client.socket.destroy();
    }
  });
});

interface Client {
  readonly socket: Socket;
  /** The head of the `nth` answer (1, the first, by default), up to its blank line. */
  head(nth?: number): Promise<string>;
  closedWithin(ms: number): Promise<boolean>;
}

/** A raw connection that keeps its own side open after the server's FIN, as a lingering client would. */
async function openClient(url: string): Promise<Client> {
  const { port } = new URL(url);
  const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined);
  let text = '';
  let closed = false;
  socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
  socket.once('close', () => (closed = true));
  return {
    socket,
    async head(nth = 1) {
      const heads = (): string[] => text.split(/(?=HTTP\/1\.1 )/).filter((part) => part.includes('\r\n\r\n'));
      for (let waited = 0; heads().length < nth && waited < 3000; waited += 10) await sleep(10);
      const answer = heads()[nth - 1] ?? '';
      return answer.slice(0, answer.indexOf('\r\n\r\n') + 2);
    },
    async closedWithin(ms) {
      for (let waited = 0; !closed && waited < ms; waited += 20) await sleep(20);
      return closed;
    },
  };
}

/** Once the moment the server lingers on an answered connection is over, a next request is answered on it. */
async function assertServesAfterLinger(client: Client): Promise<void> {
  await sleep(LINGER_MS + 200);
  client.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
  assert.match(await client.head(2), /^HTTP\/1\.1 200 /, 'a next request is answered on it');
}

function connectionCount(app: TestApp): Promise<number> {
  return new Promise((resolve, reject) =>
    app.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

async function countReaches(app: TestApp, count: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 20) {
    if ((await connectionCount(app)) <= count) return true;
    await sleep(20);
  }
  return false;
}
