import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { request, type Pet } from '../support/http-client.ts';

const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url));
const KEY_PATTERN = /pst_[A-Za-z0-9]{36}/;

interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

/** Runs `node src/server.ts` over the SQLite file `database` and waits until it listens. */
async function startServer(database: string): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER], {
    env: {
      PATH: process.env['PATH'] ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${database}`,
      DEMO_BOOTSTRAP: 'true',
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (out.includes(`Server listening at ${url}`)) break;
    if (child.exitCode !== null || child.signalCode !== null)
      assert.fail(`server exited early (${child.exitCode ?? child.signalCode}): ${out}\n${err}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      assert.fail(`server did not start within 15 s: ${out}\n${err}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { child, url, stdout: () => out, exited };
}

async function kill(server: ServerProcess): Promise<void> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await server.exited;
}

describe('durability of 201', () => {
  const directories: string[] = [];
  const running: ServerProcess[] = [];

  after(async () => {
    await Promise.all(running.map(kill));
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  });

  async function start(database: string): Promise<ServerProcess> {
    const server = await startServer(database);
    running.push(server);
    return server;
  }

  function newDatabase(): string {
    const directory = mkdtempSync(join(tmpdir(), 'petstore-durability-'));
    directories.push(directory);
    return join(directory, 'petstore.db');
  }

  it('keeps a pet answered 201 when the process is SIGKILLed right after; prints the demo key only once', async () => {
    const database = newDatabase();
    const first = await start(database);
    const key = KEY_PATTERN.exec(first.stdout())?.[0];
    assert.ok(key, `the first start prints a demo key: ${first.stdout()}`);
    const authorization = `Bearer ${key}`;

    // Killed the moment the status line and headers arrive: plain fetch, which resolves right then.
    const response = await fetch(`${first.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: '{"name":"Survivor","categoryId":9223372036854775807,"status":"sold"}',
    });
    first.child.kill('SIGKILL');
    assert.equal(response.status, 201);
    const location = response.headers.get('location');
    assert.ok(location);
    await first.exited;
    assert.equal(first.child.signalCode, 'SIGKILL');

    const second = await start(database);
    assert.doesNotMatch(second.stdout(), KEY_PATTERN, 'a restart on a non-empty store prints no new demo key');
    const pet = await request(second, new URL(location, second.url).pathname, { key });
    assert.equal(pet.status, 200, 'the demo key survives too');
    const text = pet.text;
    assert.equal(
      text,
      `{"id":${(JSON.parse(text) as Pet).id},"name":"Survivor","categoryId":9223372036854775807,"status":"sold"}`,
    );
    const list = await request(second, '/v1/pets', { key });
    assert.equal(list.json<Pet[]>().length, 1);
    await kill(second);
  });

  it('keeps all of 50 concurrent creations when the process is SIGKILLed right after the last 201', async () => {
    const database = newDatabase();
    const first = await start(database);
    const key = KEY_PATTERN.exec(first.stdout())?.[0];
    assert.ok(key);
    const authorization = `Bearer ${key}`;

    let answered = 0;
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_unused, index) => {
        // Plain fetch: the process is killed at the last answer, before request() could check it.
        const response = await fetch(`${first.url}/v1/pets`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `burst-${index}`, categoryId: index }),
        });
        answered += 1;
        if (answered === 50) first.child.kill('SIGKILL');
        return { index, status: response.status, location: response.headers.get('location') };
      }),
    );
    await first.exited;
    for (const result of results) assert.equal(result.status, 201, `creation ${result.index}`);

    const second = await start(database);
    assert.doesNotMatch(second.stdout(), KEY_PATTERN);
    const list = await request(second, '/v1/pets?limit=100', { key });
    assert.equal(list.status, 200);
    const pets = list.json<Pet[]>();
    assert.equal(pets.length, 50);
    const byId = new Map(pets.map((pet) => [pet.id, pet]));
    for (const result of results) {
      const id = Number(result.location?.split('/').pop());
      assert.deepEqual(byId.get(id), { id, name: `burst-${result.index}`, categoryId: result.index });
    }
    await kill(second);
  });
});
