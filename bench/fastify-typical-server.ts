import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { openDatabase, petStatements } from './express-server.ts';

/**
 * The app a developer would write instead of this service on the same framework, the way Fastify's
 * docs show it: Fastify 5 with its own plugins and habits. @fastify/rate-limit keyed by the API key
 * (its in-memory store), JSON schemas for the query, the path, the body and every response (Ajv
 * checks, fast-json-stringify writes), keys in a Map by their hash, a per-day counter per account in
 * a hook, and prepared SQLite statements on a WAL file (node:sqlite for better-sqlite3, whose install
 * downloads a binary; see express-server.ts). LOG=on turns on Fastify's request log (`logger: true`,
 * two lines a request), as its getting-started page does; otherwise it logs nothing.
 * DATABASE_FILE, API_KEY, PORT and HOST as for the Express app.
 */
const STATUSES = ['available', 'pending', 'sold'] as const;
/** Per key and minute, and per account and day: high enough that the benchmark is never refused. */
const LIMIT = 1_000_000_000;
const DAY_MS = 86_400_000;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('base64url');

const petSchema = {
  type: 'object',
  required: ['id', 'name', 'categoryId', 'status'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    categoryId: { type: 'integer' },
    status: { type: ['string', 'null'] },
  },
} as const;
const errorSchema = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' } },
} as const;

interface Pet {
  readonly id: number;
  readonly name: string;
  readonly categoryId: number;
  readonly status: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    account: string;
  }
}

export function createApp(db: DatabaseSync, keys: ReadonlyMap<string, string>, log: boolean) {
  const { petById, petsAfter, insertPet } = petStatements(db);
  /** Today's requests per account, for the daily quota a plan would have. */
  const today = new Map<string, { day: number; count: number }>();

  const app = Fastify({ logger: log });
  app.decorateRequest('account', '');

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const [scheme, key] = (request.headers.authorization ?? '').split(' ');
    const account = scheme === 'Bearer' && key ? keys.get(sha256(key)) : undefined;
    if (account === undefined) return reply.code(401).send({ code: 'unauthorized', message: 'a valid key is needed' });
    request.account = account;
    const day = Math.floor(Date.now() / DAY_MS);
    const counted = today.get(account);
    if (counted === undefined || counted.day !== day) today.set(account, { day, count: 1 });
    else if (++counted.count > LIMIT) return reply.code(429).send({ code: 'rate_limited', message: 'daily quota' });
  });

  app.register(rateLimit, {
    max: LIMIT,
    timeWindow: 60_000,
    keyGenerator: (request) => request.account,
  });

  app.register(async (routes) => {
    routes.get<{ Querystring: { limit: number; cursor?: string } }>(
      '/v1/pets',
      {
        schema: {
          querystring: {
            type: 'object',
            properties: {
              limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
              cursor: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,24}$' },
            },
            additionalProperties: false,
          },
          response: { 200: { type: 'array', items: petSchema }, 400: errorSchema },
        },
      },
      async (request, reply) => {
        const { limit, cursor } = request.query;
        const after = cursor === undefined ? 0 : Number(Buffer.from(cursor, 'base64url').toString());
        if (!Number.isSafeInteger(after)) return reply.code(400).send({ code: 'invalid_query', message: 'cursor' });
        const rows = petsAfter.all(after, limit + 1) as unknown as Pet[];
        const page = rows.slice(0, limit);
        if (rows.length > limit) {
          const next = Buffer.from(String(page.at(-1)?.id)).toString('base64url');
          reply.header('link', `</v1/pets?limit=${limit}&cursor=${next}>; rel="next"`);
        }
        return page;
      },
    );

    routes.get<{ Params: { id: number } }>(
      '/v1/pets/:id',
      {
        schema: {
          params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] },
          response: { 200: petSchema, 404: errorSchema },
        },
      },
      async (request, reply) => {
        const pet = petById.get(request.params.id) as Pet | undefined;
        return pet ?? reply.code(404).send({ code: 'not_found', message: 'no such pet' });
      },
    );

    routes.post<{ Body: { name: string; categoryId: number; status?: string } }>(
      '/v1/pets',
      {
        schema: {
          body: {
            type: 'object',
            required: ['name', 'categoryId'],
            properties: {
              name: { type: 'string', minLength: 1, maxLength: 200 },
              categoryId: { type: 'integer' },
              status: { type: 'string', enum: STATUSES },
            },
            additionalProperties: false,
          },
          response: { 201: petSchema },
        },
      },
      async (request, reply) => {
        const { name, categoryId, status = null } = request.body;
        const created = insertPet.get(name, categoryId, status) as unknown as Pet;
        return reply.code(201).header('location', `/v1/pets/${created.id}`).send(created);
      },
    );
  });
  return app;
}

async function main(): Promise<void> {
  const db = openDatabase(process.env['DATABASE_FILE'] ?? ':memory:');
  const keys = new Map([[sha256(process.env['API_KEY'] ?? ''), 'bench']]);
  const app = createApp(db, keys, process.env['LOG'] === 'on');
  await app.listen({ port: Number(process.env['PORT']), host: process.env['HOST'] ?? '127.0.0.1' });
  process.once('SIGTERM', () => process.exit(0));
}

if (import.meta.main) await main();
