/**
 * Frozen, versioned schema changes for the embedded store. Never edit a released migration; append
 * a new one. Versions must stay in step with postgres-migrations.ts.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const sqliteMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'pets, accounts, api keys, idempotency keys',
    sql: `
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
  },
  {
    version: 2,
    name: 'temporary bans of keys',
    sql: `
      CREATE TABLE key_bans (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key_id TEXT NOT NULL REFERENCES api_keys (id),
        started_at INTEGER NOT NULL,
        until INTEGER NOT NULL,
        lifted_at INTEGER
      );
      CREATE INDEX key_bans_key ON key_bans (key_id, started_at);
    `,
  },
];
