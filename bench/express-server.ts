import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { createHash } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';

/**
 * The stack a team would reach for instead of this service, written as such a team would write it:
 * Express 5, express-rate-limit with its default in-memory store, SQLite, and the three endpoints
 * the benchmark drives. node:sqlite stands in for better-sqlite3 (same synchronous API shape:
 * prepared statements on one connection), whose install script downloads a binary. Runs as a child
 * process: DATABASE_FILE is a fresh SQLite file, API_KEY the one key it accepts (kept hashed),
 * PORT and HOST the address.
 */
const STATUSES = ['available', 'pending', 'sold'];
/** Per key and minute: high enough that the benchmark is never refused. */
const LIMIT_PER_MINUTE = 1_000_000_000;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('base64url');

export function openDatabase(file: string): DatabaseSync {
  const db = new DatabaseSync(file);
  // WAL, and every commit on disk before its answer, as the service does.
  db.exec(`
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    CREATE TABLE IF NOT EXISTS api_keys (key_hash TEXT PRIMARY KEY, account TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS pets (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL,
      category_id INTEGER NOT NULL,
      status TEXT
    );
  `);
  return db;
}

interface NewPet {
  readonly name: string;
  readonly categoryId: number;
  readonly status: string | null;
}

/** The body of a creation, or what is wrong with it. */
function parseNewPet(body: unknown): NewPet | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object';
  const { name, categoryId, status = null, ...unknown } = body as Record<string, unknown>;
  const extra = Object.keys(unknown);
  if (extra.length > 0) return `unknown field '${extra[0]}'`;
  if (typeof name !== 'string' || name.length < 1 || name.length > 200) return "'name' must be 1 to 200 characters";
  if (typeof categoryId !== 'number' || !Number.isSafeInteger(categoryId)) return "'categoryId' must be an integer";
  if (status !== null && (typeof status !== 'string' || !STATUSES.includes(status)))
    return `'status' must be one of ${STATUSES.join(', ')}`;
  return { name, categoryId, status };
}

/** The three pet statements both hand-written apps prepare once: by id, a keyset page, a creation. */
export function petStatements(db: DatabaseSync) {
  const petById = db.prepare('SELECT id, name, category_id AS categoryId, status FROM pets WHERE id = ?');
  const petsAfter = db.prepare(
    'SELECT id, name, category_id AS categoryId, status FROM pets WHERE id > ? ORDER BY id LIMIT ?',
  );
  const insertPet = db.prepare(
    'INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) ' +
      'RETURNING id, name, category_id AS categoryId, status',
  );
  return { petById, petsAfter, insertPet };
}

export function createApp(db: DatabaseSync): express.Express {
  const keyByHash = db.prepare('SELECT account FROM api_keys WHERE key_hash = ?');
  const { petById, petsAfter, insertPet } = petStatements(db);

  const authenticate: RequestHandler = (request, response, next) => {
    const [scheme, key] = (request.get('authorization') ?? '').split(' ');
    const row = scheme === 'Bearer' && key ? keyByHash.get(sha256(key)) : undefined;
    if (row === undefined) {
      response.status(401).json({ code: 'unauthorized', message: 'a valid API key is required' });
      return;
    }
    response.locals['account'] = String(row['account']);
    next();
  };
  const limit = rateLimit({
    windowMs: 60_000,
    limit: LIMIT_PER_MINUTE,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (_request, response) => String(response.locals['account']),
  });

  const app = express();
  app.use(express.json());
  app.use('/v1', authenticate, limit);

  app.get('/v1/pets', (request, response) => {
    const pageSize = request.query['limit'] === undefined ? 20 : Number(request.query['limit']);
    const cursor = request.query['cursor'];
    const after = typeof cursor === 'string' ? Number(Buffer.from(cursor, 'base64url').toString()) : 0;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100 || !Number.isSafeInteger(after)) {
      response.status(400).json({ code: 'invalid_query', message: 'limit is 1 to 100; cursor comes from a Link' });
      return;
    }
    const rows = petsAfter.all(after, pageSize + 1);
    const page = rows.slice(0, pageSize);
    if (rows.length > pageSize) {
      const next = Buffer.from(String(page.at(-1)?.['id'])).toString('base64url');
      response.links({ next: `/v1/pets?limit=${pageSize}&cursor=${next}` });
    }
    response.json(page);
  });

  app.get('/v1/pets/:id', (request, response) => {
    const id = /^[1-9][0-9]{0,15}$/.test(request.params.id) ? Number(request.params.id) : 0;
    const pet = id > 0 ? petById.get(id) : undefined;
    if (pet === undefined) response.status(404).json({ code: 'not_found', message: 'no such pet' });
    else response.json(pet);
  });

  app.post('/v1/pets', (request, response) => {
    const pet = parseNewPet(request.body);
    if (typeof pet === 'string') {
      response.status(400).json({ code: 'invalid_body', message: pet });
      return;
    }
    const created = insertPet.get(pet.name, pet.categoryId, pet.status);
    response.status(201).location(`/v1/pets/${created?.['id']}`).json(created);
  });

  // Express's own would answer HTML: malformed JSON, a body too large.
  const answerErrors: ErrorRequestHandler = (
    error: { status?: unknown; message?: unknown },
    _request,
    response,
    next,
  ) => {
    if (response.headersSent) {
      next(error);
      return;
    }
    const status = typeof error.status === 'number' ? error.status : 500;
    response.status(status).json({ code: 'error', message: status < 500 ? String(error.message) : 'internal error' });
  };
  app.use(answerErrors);
  return app;
}

/** Keeps a key as its hash only, as a service that hands keys out would. */
export function addApiKey(db: DatabaseSync, key: string, account: string): void {
  db.prepare('INSERT OR IGNORE INTO api_keys (key_hash, account) VALUES (?, ?)').run(sha256(key), account);
}

function main(): void {
  const db = openDatabase(process.env['DATABASE_FILE'] ?? ':memory:');
  addApiKey(db, process.env['API_KEY'] ?? '', 'bench');
  createApp(db).listen(Number(process.env['PORT']), process.env['HOST'] ?? '127.0.0.1');
  process.once('SIGTERM', () => process.exit(0));
}

if (import.meta.main) main();
