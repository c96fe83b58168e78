import type { Migration } from './sqlite-migrations.ts';

/**
 * Frozen, versioned schema changes for PostgreSQL. Never edit a released migration; append a new
 * one. Versions stay in step with sqlite-migrations.ts: version N means the same schema in both.
 *
 * Identifiers are `bigint GENERATED ALWAYS AS IDENTITY`, so they are never supplied by callers and
 * never reused. Times are bigint milliseconds since the epoch, as in SQLite, so both backends
 * store and compare the same numbers. The driver reads bigint columns as strings; the store
 * converts them (ids and times to numbers, category_id to an exact BigInt).
 */
export const postgresMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'pets, accounts, api keys, idempotency keys',
    sql: `
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
  },
  {
    version: 2,
    name: 'temporary bans of keys',
    sql: `
      CREATE TABLE key_bans (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key_id text NOT NULL REFERENCES api_keys (id),
        started_at bigint NOT NULL,
        until bigint NOT NULL,
        lifted_at bigint
      );
      CREATE INDEX key_bans_key ON key_bans (key_id, started_at);
    `,
  },
];
