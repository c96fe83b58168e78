import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { before, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { appForSuite } from '../support/suite-app.ts';
import type { TestApp } from '../support/test-app.ts';

/**
 * Sends one request, half-closes the connection at once (shutdown(SHUT_WR)), and reads until the server
 * closes it: an answer the server lost would leave nothing here.
 */
async function halfClosedRequest(app: TestApp, method: string, path: string, key: string): Promise<string> {
  const { port } = new URL(app.url);
  const socket = connect(Number(port), '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.end(`${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  await new Promise<void>((resolve, reject) => {
    socket.once('close', () => resolve());
    socket.once('error', reject);
  });
  return received;
}

describeEachBackend('a client that half-closes after its request', (backend) => {
  const app = appForSuite({ backend });
  let key: string;
  let petPath: string;

  before(async () => {
    key = (await app.newKey()).key;
    const created = await fetch(`${app.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    petPath = created.headers.get('location') ?? '';
    assert.equal(created.status, 201);
  });

  for (const [method, path, status] of [
    ['GET', 'pet', 200],
    ['HEAD', 'pet', 200],
    ['GET', '/v1/pets/999999', 404],
    ['GET', '/readyz', 200],
  ] as const) {
    it(`still gets the answer to ${method} ${path}, and then the connection closes`, async () => {
      const answer = await halfClosedRequest(app, method, path === 'pet' ? petPath : path, key);
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), `got: ${answer.slice(0, 200)}`);
    });
  }
});
