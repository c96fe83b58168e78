import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KEY_SCOPES, type KeyScope } from '../../src/domain/scopes.ts';
import { describeEachBackend, POSTGRES_PAIR } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { loadContract, type OpenApiDocument } from '../support/openapi-contract.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { MID, rateLimitOf } from '../ratelimit/rate-limit-assertions.ts';

/**
 * Key scopes through the real app, for every operation of the document it serves: a key holding an
 * operation's scope gets its usual answer, a key without it gets 403 `insufficient_scope` naming the
 * scope, in the body and in `WWW-Authenticate`, with the rate-limit headers, and the refusal counts
 * like any other request, in the account's window and in its usage history. `request()` checks
 * every answer against the served document, so each 403 seen here is also a contract check.
 */

const USAGE_PER_MINUTE = 5;
/** The UTC hour of MID (2026-06-01T12:00:30Z). */
const HOUR = Date.UTC(2026, 5, 1, 12);
const HISTORY_OF_THE_HOUR = '/v1/usage/history?from=2026-06-01T12:00:00Z&to=2026-06-01T13:00:00Z';
const NEW_PET = { name: 'Rex', categoryId: 3 };
/** The scope sets that matter: each scope alone, and all of them (what a key gets by default). */
const SCOPE_SETS: readonly (readonly KeyScope[])[] = [...KEY_SCOPES.map((scope) => [scope]), KEY_SCOPES];

/**
 * What the service promises: the scope each operation needs. An operation of the document that is
 * missing here fails the document test, and one without a way to call it (CALLS) fails the matrix.
 */
const SCOPE_OF: Readonly<Record<string, KeyScope>> = {
  listPets: 'pets:read',
  getPet: 'pets:read',
  createPet: 'pets:write',
  getUsage: 'usage:read',
  getUsageHistory: 'usage:read',
  listKeys: 'keys:manage',
  createKey: 'keys:manage',
  revokeKey: 'keys:manage',
  rollKey: 'keys:manage',
};

/** What a call of an operation needs beyond its method and path, and what the usage history counts it as. */
interface CallFacts {
  readonly usage: 'listPets' | 'getPet' | 'createPet' | 'usage' | 'keys';
  readonly json?: unknown;
  /** Whether the account's windows count it (GET /v1/usage and its history have a small limit of their own). */
  readonly spendsQuota: boolean;
}

const CALLS: Readonly<Record<string, CallFacts>> = {
  listPets: { usage: 'listPets', spendsQuota: true },
  getPet: { usage: 'getPet', spendsQuota: true },
  createPet: { usage: 'createPet', json: NEW_PET, spendsQuota: true },
  getUsage: { usage: 'usage', spendsQuota: false },
  getUsageHistory: { usage: 'usage', spendsQuota: false },
  listKeys: { usage: 'keys', spendsQuota: true },
  // A key gives only scopes it holds: keys:manage, which every key that may call it holds.
  createKey: { usage: 'keys', json: { name: 'scoped', scopes: ['keys:manage'] }, spendsQuota: true },
  // `{keyId}`: another key of the caller's account, with the caller's scopes.
  revokeKey: { usage: 'keys', spendsQuota: true },
  rollKey: { usage: 'keys', json: {}, spendsQuota: true },
};

interface DocumentedOperation {
  readonly operationId: string;
  readonly method: string;
  /** The path template as the document writes it, under the server URL: `/pets/{petId}`. */
  readonly template: string;
  readonly security?: ReadonlyArray<Record<string, readonly string[]>>;
  readonly responses: Record<string, unknown>;
}

interface Operation extends CallFacts {
  readonly operationId: string;
  readonly method: 'GET' | 'POST';
  /** A concrete path of the operation: `/v1/pets/1`. */
  readonly path: string;
  /** Its path template under the server URL, as the document and messages write it: `/v1/pets/{petId}`. */
  readonly template: string;
  readonly scope: KeyScope;
  /** The operation's documented success. */
  readonly success: number;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every operation of the document that needs a key (public ones say `security: []`). */
function documentedOperations(document: OpenApiDocument): DocumentedOperation[] {
  const operations: DocumentedOperation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [method, body] of Object.entries(item)) {
      if (!HTTP_METHODS.includes(method)) continue;
      const operation = body as unknown as Omit<DocumentedOperation, 'method' | 'template'>;
      if (operation.security?.length === 0) continue;
      operations.push({ ...operation, method, template });
    }
  }
  return operations;
}

/** The documented operations, each ready to be called, with `{petId}` an existing pet; `{keyId}` is filled per call. */
function operationsToCall(document: OpenApiDocument, petId: number): Operation[] {
  const base = new URL(document.servers?.[0]?.url ?? '/', 'http://base.invalid').pathname.replace(/\/$/, '');
  return documentedOperations(document).map((documented) => {
    const { operationId } = documented;
    const facts = CALLS[operationId];
    assert.ok(facts, `no way to call ${operationId} is known: add it to CALLS`);
    const scope = documented.security?.[0]?.bearerAuth?.[0];
    assert.ok(scope !== undefined && (KEY_SCOPES as readonly string[]).includes(scope), `${operationId}'s scope`);
    const success = Object.keys(documented.responses)
      .map(Number)
      .find((status) => status >= 200 && status < 300);
    assert.ok(success !== undefined, `${operationId} documents a success`);
    const method = documented.method.toUpperCase();
    assert.ok(method === 'GET' || method === 'POST', `${operationId}: a method this test can call (${method})`);
    const path = `${base}${documented.template.replace('{petId}', String(petId))}`;
    assert.doesNotMatch(path.replace('{keyId}', ''), /\{/, `${operationId}: a path parameter this test cannot fill`);
    const template = `${base}${documented.template}`;
    return { ...facts, operationId, method, path, template, scope: scope as KeyScope, success };
  });
}

/** The parameters of a challenge such as `Bearer realm="petstore", error="insufficient_scope"`. */
function challengeOf(answer: HttpAnswer): { scheme: string; params: Record<string, string> } {
  const header = answer.headers.get('www-authenticate');
  assert.ok(header !== null, `WWW-Authenticate on a ${answer.status}`);
  const scheme = header.split(' ', 1)[0] ?? '';
  const params = Object.fromEntries(
    [...header.matchAll(/([a-z_]+)="([^"]*)"/g)].map(([, name, value]) => [name, value]),
  );
  return { scheme, params: params as Record<string, string> };
}

/** A 403 `insufficient_scope` for `operation`, to a key holding `held`: its headers, and its body unless HEAD. */
function assertOutOfScope(answer: HttpAnswer, operation: Operation, held: readonly KeyScope[], method: string): void {
  const where = `${method} ${operation.path} with ${held.join(' ')}`;
  assert.equal(answer.status, 403, `${where}: ${answer.text}`);
  const { scheme, params } = challengeOf(answer);
  assert.equal(scheme, 'Bearer', where);
  assert.equal(params.error, 'insufficient_scope', where);
  assert.equal(params.scope, operation.scope, where);
  rateLimitOf(answer);
  if (method === 'HEAD') {
    assert.equal(answer.text, '', `${where}: a HEAD answer has no body`);
    return;
  }
  const call = `${operation.method} ${operation.template}`;
  assertError(answer, 403, 'insufficient_scope', `the scope '${operation.scope}'`, call, ...held);
}

interface Point {
  readonly at: string;
  readonly operation: string;
  readonly outcome: string;
  readonly count: number;
}

const point = (operation: string, outcome: string, count: number): Point => ({
  at: new Date(HOUR).toISOString(),
  operation,
  outcome,
  count,
});

/** The account's usage history of the hour, once this instance has stored its counts, read with a key that may. */
async function storedHistory(app: TestApp, reader: string): Promise<readonly Point[]> {
  await app.services.usageFlusher.flush();
  const answer = await request(app, HISTORY_OF_THE_HOUR, { key: reader });
  assert.equal(answer.status, 200, answer.text);
  return answer.json<{ points: Point[] }>().points;
}

/** A key of the account with every scope, to read what its scoped key did. */
async function fullKeyOf(app: TestApp, account: string): Promise<string> {
  return (await app.services.accounts.createKey(account)).key;
}

describeEachBackend('key scopes', (backend) => {
  let app: TestApp;
  let clock: ManualClock;
  let document: OpenApiDocument;
  let operations: Operation[];

  before(async () => {
    clock = new ManualClock(MID);
    app = await startTestApp({ backend, clock, env: { USAGE_PER_MINUTE: String(USAGE_PER_MINUTE) } });
    document = (await loadContract(app)).document;
    const { key } = await app.newKey({ plan: 'pro' });
    const created = await request(app, '/v1/pets', { method: 'POST', key, json: NEW_PET });
    assert.equal(created.status, 201, created.text);
    operations = operationsToCall(document, created.json<{ id: number }>().id);
  });
  after(() => app.close());

  it('the document names the one scope of each operation, and lists its 403 with the challenge', () => {
    const documented = documentedOperations(document);
    assert.deepEqual(documented.map((operation) => operation.operationId).sort(), Object.keys(SCOPE_OF).sort());
    for (const operation of documented) {
      const scope = SCOPE_OF[operation.operationId];
      assert.deepEqual(operation.security, [{ bearerAuth: [scope] }], operation.operationId);
      const forbidden = operation.responses['403'] as {
        headers?: Record<string, unknown>;
        content?: Record<string, { schema?: unknown }>;
      };
      assert.ok(forbidden, `${operation.operationId} lists 403`);
      assert.ok(forbidden.headers?.['WWW-Authenticate'], `${operation.operationId}'s 403 has WWW-Authenticate`);
      assert.ok(
        forbidden.headers?.['X-RateLimit-Remaining'],
        `${operation.operationId}'s 403 has the rate-limit headers`,
      );
      assert.deepEqual(forbidden.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' });
    }
    const used = new Set(Object.values(SCOPE_OF));
    assert.deepEqual(
      KEY_SCOPES.filter((scope) => used.has(scope)),
      [...KEY_SCOPES],
      'every scope is needed by some operation',
    );
  });

  for (const held of SCOPE_SETS) {
    it(`a key with ${held.join(', ')}: the usual answer in scope, a counted 403 out of it`, async () => {
      clock.set(MID);
      for (const operation of operations) {
        // An account of its own per operation: its windows and history show this operation's calls alone.
        const { key, account } = await app.newKey({ scopes: held });
        const call = { method: operation.method, key, json: operation.json };
        const head = { method: 'HEAD', key };
        const calls = operation.method === 'GET' ? [call, head] : [call, call];
        const spare = await app.services.accounts.createKey(account, { scopes: held });
        const path = operation.path.replace('{keyId}', spare.record.id);
        const answers: HttpAnswer[] = [];
        for (const sent of calls) answers.push(await request(app, path, sent));
        const [first, second] = answers as [HttpAnswer, HttpAnswer];
        const where = `${operation.operationId} with ${held.join(' ')}`;

        if (held.includes(operation.scope)) {
          assert.equal(first.status, operation.success, `${where}: ${first.text}`);
          assert.equal(second.status, operation.success, `${where} (${calls[1]?.method}): ${second.text}`);
          assert.deepEqual(await storedHistory(app, await fullKeyOf(app, account)), [point(operation.usage, '2xx', 2)]);
          continue;
        }

        assertOutOfScope(first, operation, held, operation.method);
        assertOutOfScope(second, operation, held, calls[1]?.method ?? '');
        const [before, after] = [rateLimitOf(first), rateLimitOf(second)];
        if (operation.spendsQuota) {
          assert.equal(before.remaining, before.limit - 1, `${where}: the first request of the account counted`);
          assert.equal(after.remaining, before.remaining - 1, `${where}: and the second`);
        } else {
          // The account's windows as a pets request would find them: untouched (the small limit is apart).
          assert.deepEqual([before.remaining, after.remaining], [before.limit, before.limit], where);
        }
        const reader = await fullKeyOf(app, account);
        assert.deepEqual(await storedHistory(app, reader), [point(operation.usage, '4xx', 2)], where);
      }
    });
  }

  it("refusals spend the account's windows: a creation refused for its scope, then every call is 429", async () => {
    clock.set(MID);
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 3, perDay: 100, scopes: ['pets:read'] });
    for (let i = 0; i < 3; i += 1) {
      const refused = await request(app, '/v1/pets', { method: 'POST', key, json: NEW_PET });
      assertError(refused, 403, 'insufficient_scope', "'pets:write'");
      assert.equal(rateLimitOf(refused).remaining, 2 - i);
    }
    assertError(await request(app, '/v1/pets', { key }), 429, 'rate_limited');
    assertError(await request(app, '/v1/pets', { method: 'POST', key, json: NEW_PET }), 429, 'rate_limited');
  });

  it("refusals of the usage operations spend their small limit, and the account's windows not at all", async () => {
    clock.set(MID);
    const { key, account } = await app.newKey({ scopes: ['pets:read'] });
    for (let i = 0; i < USAGE_PER_MINUTE; i += 1) {
      const path = i % 2 === 0 ? '/v1/usage' : '/v1/usage/history';
      assertError(await request(app, path, { key }), 403, 'insufficient_scope', "'usage:read'");
    }
    assertError(await request(app, '/v1/usage', { key }), 429, 'rate_limited', `${USAGE_PER_MINUTE} per minute`);
    const pets = await request(app, '/v1/pets', { key });
    assert.equal(pets.status, 200, pets.text);
    assert.equal(rateLimitOf(pets).remaining, rateLimitOf(pets).limit - 1, 'the first request in the windows');
    clock.set(MID + 60_000);
    const history = await storedHistory(app, await fullKeyOf(app, account));
    assert.deepEqual(history, [point('listPets', '2xx', 1), point('usage', '429', 1), point('usage', '4xx', 5)]);
  });

  it('refuses from the verified key alone: with the key tables gone, a 403 stays a 403', async () => {
    clock.set(MID);
    const ttlMs = app.services.config.keyCacheTtlMs;
    const { key } = await app.newKey({ scopes: ['pets:read'] });
    const { key: unseen } = await app.newKey();
    // The key is trusted from the cache for KEY_CACHE_TTL_MS (1 s) after it was verified: an attempt
    // that took longer proves nothing either way and is made again.
    for (let attempt = 1; ; attempt += 1) {
      const started = performance.now();
      assert.equal((await request(app, '/v1/pets', { key })).status, 200, 'verified, and kept in the cache');
      await app.execute(RENAME_KEY_TABLES);
      let refused: HttpAnswer;
      let lookedUp: HttpAnswer;
      try {
        refused = await request(app, '/v1/pets', { method: 'POST', key, json: NEW_PET });
        lookedUp = await request(app, '/v1/pets', { key: unseen });
      } finally {
        await app.execute(RESTORE_KEY_TABLES);
      }
      if (performance.now() - started < ttlMs) {
        assertError(refused, 403, 'insufficient_scope', "'pets:write'");
        assert.ok(lookedUp.status >= 500, `a key that must be looked up fails: ${lookedUp.status} ${lookedUp.text}`);
        return;
      }
      assert.ok(attempt < 5, `${attempt} attempts each outlasted the key cache's ${ttlMs} ms`);
    }
  });
});

/** Breaks what a key lookup reads (findPrincipalByHash joins the keys, their accounts and bans). */
const RENAME_KEY_TABLES = 'ALTER TABLE api_keys RENAME TO api_keys_away; ALTER TABLE accounts RENAME TO accounts_away;';
const RESTORE_KEY_TABLES =
  'ALTER TABLE api_keys_away RENAME TO api_keys; ALTER TABLE accounts_away RENAME TO accounts;';

describe(`a read-only key on two instances [${POSTGRES_PAIR.title}]`, { skip: POSTGRES_PAIR.skip ?? false }, () => {
  const clock = new ManualClock(MID);
  let first: TestApp;
  let second: TestApp;

  before(async () => {
    first = await startTestApp({ backend: POSTGRES_PAIR, clock });
    const { databaseUrl, redisUrl, redisPrefix } = first.services.config;
    const shared = { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl ?? '', REDIS_PREFIX: redisPrefix };
    second = await startTestApp({ backend: POSTGRES_PAIR, clock, env: shared });
  });
  after(async () => {
    await second.close();
    await first.close();
  });

  it('is served reads and refused creations on both, every call counted once in the shared window', async () => {
    const { key, account } = await first.newKey({
      plan: 'enterprise',
      perMinute: 6,
      perDay: 100,
      scopes: ['pets:read'],
    });
    const remaining: number[] = [];
    for (const instance of [first, second, first]) {
      const read = await request(instance, '/v1/pets', { key });
      assert.equal(read.status, 200, read.text);
      remaining.push(rateLimitOf(read).remaining);
    }
    for (const instance of [second, first, second]) {
      const refused = await request(instance, '/v1/pets', { method: 'POST', key, json: NEW_PET });
      assertError(refused, 403, 'insufficient_scope', "'pets:write'");
      remaining.push(rateLimitOf(refused).remaining);
    }
    assert.deepEqual(remaining, [5, 4, 3, 2, 1, 0]);
    for (const instance of [first, second]) {
      assertError(await request(instance, '/v1/pets', { key }), 429, 'rate_limited');
      assertError(await request(instance, '/v1/pets', { method: 'POST', key, json: NEW_PET }), 429, 'rate_limited');
    }
    await second.services.usageFlusher.flush();
    assert.deepEqual(await storedHistory(first, await fullKeyOf(first, account)), [
      point('createPet', '429', 2),
      point('createPet', '4xx', 3),
      point('listPets', '2xx', 3),
      point('listPets', '429', 2),
    ]);
  });
});
