import assert from 'node:assert/strict';
import { request, type HttpAnswer, type HttpTarget } from './http-client.ts';
import type { TestApp } from './test-app.ts';

/**
 * What the tests of storage not answering (a SQLite file locked by another process, PostgreSQL
 * unreachable) make and check: the pets read during the outage, creations, the keys' last-used
 * write-back, and how long each answer took.
 */

export interface Timed {
  readonly response: HttpAnswer;
  readonly ms: number;
}

export async function timed(answer: Promise<HttpAnswer>): Promise<Timed> {
  const started = performance.now();
  const response = await answer;
  return { response, ms: performance.now() - started };
}

/** A creation with `headers`, and an Idempotency-Key if given. */
export function postPet(
  target: HttpTarget,
  headers: Record<string, string>,
  pet: { readonly name: string; readonly status: string; readonly idempotencyKey?: string },
): Promise<HttpAnswer> {
  const { name, status, idempotencyKey } = pet;
  return request(target, '/v1/pets', {
    method: 'POST',
    headers: { ...headers, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    json: { name, categoryId: 1, status },
  });
}

/**
 * `count` pets of `status` (pet-0, pet-1, …), then the full first page of two and the first pet read,
 * so that the app holds them in its cache from now on; the pets' ids.
 */
export async function createPetsAndCacheReads(
  app: TestApp,
  headers: Record<string, string>,
  count: number,
  status: string,
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const response = await postPet(app, headers, { name: `pet-${i}`, status });
    assert.equal(response.status, 201);
    ids.push(response.json<{ id: number }>().id);
  }
  assert.equal((await request(app, '/v1/pets?limit=2', { headers })).status, 200);
  assert.equal((await request(app, `/v1/pets/${ids[0]}`, { headers })).status, 200);
  return ids;
}

/** A round of requests during an outage, sent while the keys' last-used write-back runs. */
export interface WriteBackRound {
  readonly headers: Record<string, string>;
  /** Reads by name, as their paths: each is to be answered 200 within `limits.readMs`. */
  readonly reads: Record<string, string>;
  /** Creations by name: each is to be answered 503 service_unavailable within `limits.writeMs`. */
  readonly writes: Record<string, () => Promise<HttpAnswer>>;
  /** `writeBackMs`: how long the write-back may take, failed or not. */
  readonly limits: { readonly readMs: number; readonly writeMs: number; readonly writeBackMs: number };
  /** How the failures name the outage ("while …"). */
  readonly whileOut: string;
}

/**
 * The keys' last-used write-back, started as its timer starts it, and the round's requests sent while
 * it runs: reads are served and creations refused in time, and the write-back waits for neither.
 */
export async function checkWriteBackRound(app: TestApp, round: WriteBackRound): Promise<void> {
  const { headers, limits, whileOut } = round;
  const started = performance.now();
  const writeBack = app.services.keyVerifier
    .flushLastUsed()
    .catch(() => undefined)
    .then(() => performance.now() - started);
  const reads = Object.entries(round.reads).map(
    ([name, path]) => [name, timed(request(app, path, { headers }))] as const,
  );
  const writes = Object.entries(round.writes).map(([name, send]) => [name, timed(send())] as const);
  for (const [name, read] of reads) {
    const { response, ms } = await read;
    assert.equal(response.status, 200, `${name}: ${response.text}`);
    assert.ok(ms < limits.readMs, `${name} took ${Math.round(ms)} ms ${whileOut}`);
  }
  for (const [name, write] of writes) {
    const { response, ms } = await write;
    assert.equal(response.status, 503, `${name}: ${response.text}`);
    assert.equal(response.json<{ code: string }>().code, 'service_unavailable');
    assert.ok(ms < limits.writeMs, `${name} got its 503 after ${Math.round(ms)} ms`);
  }
  const writeBackMs = await writeBack;
  assert.ok(writeBackMs < limits.writeBackMs, `the write-back took ${Math.round(writeBackMs)} ms ${whileOut}`);
}
