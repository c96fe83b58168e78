/**
 * The schema as the first release created it, frozen here so that upgrading such a database stays
 * tested after its migration runner is gone: its own `schema_migrations` table with versions 1 and
 * 2, and the SQL of those two versions exactly as they shipped, per backend.
 */
export type ReleaseOneBackend = 'sqlite' | 'postgres';

const SQLITE_VERSIONS: readonly string[] = [
  `
      CREATE TABLE pets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        category_id INTEGER NOT NULL,
        status TEXT CHECK (status IN ('available', 'pending', 'sold')),
        created_at INTEGER NOT NULL
      );
      CREATE INDEX pets_status_id ON pets (status, id);
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        plan TEXT NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
        per_minute INTEGER,
        per_day INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts (id),
        hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER,
        last_used_at INTEGER
      );
      CREATE INDEX api_keys_account ON api_keys (account_id);
      CREATE TABLE idempotency_keys (
        account_id INTEGER NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        status_code INTEGER,
        body TEXT,
        PRIMARY KEY (account_id, key)
      );
      CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
    `,
  `
      CREATE TABLE key_bans (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        started_at INTEGER NOT NULL,
        until INTEGER NOT NULL,
        lifted_at INTEGER
      );
      CREATE INDEX key_bans_key ON key_bans (key_id, started_at);
    `,
];

const POSTGRES_VERSIONS: readonly string[] = [
  `
      CREATE TABLE pets (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL,
        category_id bigint NOT NULL,
        status text CHECK (status IN ('available', 'pending', 'sold')),
        created_at bigint NOT NULL
      );
      CREATE INDEX pets_status_id ON pets (status, id);
      CREATE TABLE accounts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL UNIQUE,
        plan text NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
        per_minute bigint,
        per_day bigint,
        created_at bigint NOT NULL
      );
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts (id),
        hash text NOT NULL UNIQUE,
        created_at bigint NOT NULL,
        expires_at bigint,
        revoked_at bigint,
        last_used_at bigint
      );
      CREATE INDEX api_keys_account ON api_keys (account_id);
      CREATE TABLE idempotency_keys (
        account_id bigint NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        created_at bigint NOT NULL,
        status_code integer,
        body text,
        PRIMARY KEY (account_id, key)
      );
      CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
    `,
  `
      CREATE TABLE key_bans (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key_id text NOT NULL REFERENCES api_keys (id),
        started_at bigint NOT NULL,
        until bigint NOT NULL,
        lifted_at bigint
      );
      CREATE INDEX key_bans_key ON key_bans (key_id, started_at);
    `,
];

const NAMES = ['pets, accounts, api keys, idempotency keys', 'temporary bans of keys'];

const BOOKKEEPING: Readonly<Record<ReleaseOneBackend, string>> = {
  sqlite:
    'CREATE TABLE IF NOT EXISTS schema_migrations ' +
    '(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);',
  postgres:
    'CREATE TABLE IF NOT EXISTS schema_migrations ' +
    '(version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL);',
};

/** SQL that leaves a database as the first release's migrate() did after applying `versions`. */
export function releaseOneSchema(backend: ReleaseOneBackend, versions = 2, appliedAt = 1_750_000_000_000): string {
  const bodies = backend === 'sqlite' ? SQLITE_VERSIONS : POSTGRES_VERSIONS;
  const statements = [BOOKKEEPING[backend]];
  for (let version = 1; version <= versions; version += 1) {
    statements.push(bodies[version - 1] as string);
    statements.push(
      `INSERT INTO schema_migrations (version, name, applied_at) ` +
        `VALUES (${version}, '${NAMES[version - 1]}', ${appliedAt});`,
    );
  }
  return statements.join('\n');
}
