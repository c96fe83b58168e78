import { sql, type ColumnDefinitionBuilder, type Kysely } from 'kysely';
import type { DatabaseSchema } from './database-schema.ts';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';

/**
 * Frozen schema changes, one definition for both backends. Never edit a released migration; add a
 * new one whose name sorts after the last. Only column types differ between the backends: ids are
 * `bigint GENERATED ALWAYS AS IDENTITY` on PostgreSQL (never supplied by callers, never reused)
 * and `INTEGER PRIMARY KEY AUTOINCREMENT` on SQLite; integers are `bigint` on PostgreSQL and
 * `INTEGER` (64-bit) on SQLite. Times are milliseconds since the epoch on both.
 */
export interface MigrationDialect {
  /** Column type of ids, counts, limits and times: 64-bit on both backends. */
  readonly integerType: 'integer' | 'bigint';
  /** Makes a column the table's generated, never-reused primary key. */
  generatedId(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  readonly backend: 'sqlite' | 'postgres';
  /** Whether a table exists where unqualified names resolve (the schema of search_path on PostgreSQL). */
  tableExists(db: Kysely<unknown>, table: string): Promise<boolean>;
}

/**
 * The first release kept its own `schema_migrations` table (versions 1 and 2) and created the
 * same tables as 0001 and 0002 here. Such a database is adopted: the migration that matches an
 * applied release version checks its tables are there and is recorded without running, inside the
 * migrator's transaction and under its lock, so adoption and recording are one atomic step.
 */
const RELEASE_ONE_VERSIONS: Readonly<Record<string, { version: number; tables: readonly string[] }>> = {
  '0001-pets-accounts-keys-idempotency': {
    version: 1,
    tables: ['pets', 'accounts', 'api_keys', 'idempotency_keys'],
  },
  '0002-key-bans': { version: 2, tables: ['key_bans'] },
};

type MigrationBody = (db: Kysely<unknown>, dialect: MigrationDialect) => Promise<void>;

const MIGRATIONS: Readonly<Record<string, MigrationBody>> = {
  '0001-pets-accounts-keys-idempotency': async (db, { integerType, generatedId }) => {
    await db.schema
      .createTable('pets')
      .addColumn('id', integerType, generatedId)
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('category_id', integerType, (column) => column.notNull())
      .addColumn('status', 'text', (column) => column.check(sql`status IN ('available', 'pending', 'sold')`))
      .addColumn('created_at', integerType, (column) => column.notNull())
      .execute();
    await db.schema.createIndex('pets_status_id').on('pets').columns(['status', 'id']).execute();
    await db.schema
      .createTable('accounts')
      .addColumn('id', integerType, generatedId)
      .addColumn('name', 'text', (column) => column.notNull().unique())
      .addColumn('plan', 'text', (column) =>
        column.notNull().check(sql`plan IN ('free', 'pro', 'business', 'enterprise')`),
      )
      .addColumn('per_minute', integerType)
      .addColumn('per_day', integerType)
      .addColumn('created_at', integerType, (column) => column.notNull())
      .execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('account_id', integerType, (column) => column.notNull().references('accounts.id'))
      .addColumn('hash', 'text', (column) => column.notNull().unique())
      .addColumn('created_at', integerType, (column) => column.notNull())
      .addColumn('expires_at', integerType)
      .addColumn('revoked_at', integerType)
      .addColumn('last_used_at', integerType)
      .execute();
    await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('account_id', integerType, (column) => column.notNull())
      .addColumn('key', 'text', (column) => column.notNull())
      .addColumn('fingerprint', 'text', (column) => column.notNull())
      .addColumn('created_at', integerType, (column) => column.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('body', 'text')
      .addPrimaryKeyConstraint('idempotency_keys_pkey', ['account_id', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
  },
  '0002-key-bans': async (db, { integerType, generatedId }) => {
    await db.schema
      .createTable('key_bans')
      .addColumn('id', integerType, generatedId)
      .addColumn('key_id', 'text', (column) => column.notNull().references('api_keys.id'))
      .addColumn('started_at', integerType, (column) => column.notNull())
      .addColumn('until', integerType, (column) => column.notNull())
      .addColumn('lifted_at', integerType)
      .execute();
    await db.schema.createIndex('key_bans_key').on('key_bans').columns(['key_id', 'started_at']).execute();
  },
  '0003-usage-hours': async (db, { integerType }) => {
    await db.schema
      .createTable('usage_hours')
      .addColumn('account_id', integerType, (column) => column.notNull())
      .addColumn('key_id', 'text', (column) => column.notNull())
      .addColumn('operation', 'text', (column) => column.notNull())
      .addColumn('outcome', 'text', (column) => column.notNull())
      .addColumn('hour', integerType, (column) => column.notNull())
      .addColumn('count', integerType, (column) => column.notNull())
      .addColumn('last_at', integerType, (column) => column.notNull())
      // Account first: an account's history is one range of the key.
      .addPrimaryKeyConstraint('usage_hours_pkey', ['account_id', 'hour', 'key_id', 'operation', 'outcome'])
      .execute();
    // Retention, the operator's views over every account, and the deprecated callers read by hour.
    await db.schema.createIndex('usage_hours_hour').on('usage_hours').columns(['hour', 'operation']).execute();
  },
  '0004-operator-tokens': async (db, { integerType }) => {
    await db.schema
      .createTable('operator_tokens')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('hash', 'text', (column) => column.notNull())
      .addColumn('name', 'text')
      .addColumn('created_at', integerType, (column) => column.notNull())
      .addColumn('revoked_at', integerType)
      .addColumn('last_used_at', integerType)
      .execute();
  },
  '0005-operator-sessions': async (db, { integerType }) => {
    await db.schema
      .createTable('operator_sessions')
      // The session id is never stored: only its SHA-256, which the console's cookie is looked up by.
      .addColumn('hash', 'text', (column) => column.primaryKey())
      .addColumn('token_id', 'text', (column) => column.notNull().references('operator_tokens.id'))
      .addColumn('started_at', integerType, (column) => column.notNull())
      .addColumn('last_seen_at', integerType, (column) => column.notNull())
      .addColumn('ended_at', integerType)
      .execute();
    // Revoking a token ends its sessions; the purge at each login reads by start.
    await db.schema.createIndex('operator_sessions_token').on('operator_sessions').column('token_id').execute();
    await db.schema.createIndex('operator_sessions_started').on('operator_sessions').column('started_at').execute();
  },
  '0006-audit-trail': async (db, { integerType, generatedId }) => {
    await db.schema
      .createTable('audit_entries')
      .addColumn('id', integerType, generatedId)
      .addColumn('at', integerType, (column) => column.notNull())
      .addColumn('actor_kind', 'text', (column) => column.notNull().check(sql`actor_kind IN ('operator_token', 'cli')`))
      .addColumn('actor_id', 'text', (column) => column.notNull())
      .addColumn('actor_name', 'text')
      .addColumn('action', 'text', (column) => column.notNull())
      .addColumn('target_type', 'text', (column) => column.notNull())
      .addColumn('target_id', 'text', (column) => column.notNull())
      .addColumn('before', 'text')
      .addColumn('after', 'text')
      .addColumn('request_id', 'text')
      .execute();
    // Pages run newest first by (at, id), each filter by its own index; retention deletes by `at`.
    await db.schema.createIndex('audit_entries_at').on('audit_entries').columns(['at', 'id']).execute();
    await db.schema
      .createIndex('audit_entries_actor')
      .on('audit_entries')
      .columns(['actor_kind', 'actor_id', 'at'])
      .execute();
    await db.schema
      .createIndex('audit_entries_target')
      .on('audit_entries')
      .columns(['target_type', 'target_id', 'at'])
      .execute();
    await db.schema.createIndex('audit_entries_action').on('audit_entries').columns(['action', 'at']).execute();
  },
  '0007-key-scopes': async (db) => {
    // Every key issued before scopes existed keeps every right. The default stays: an instance of the
    // release before, still running during a rolling upgrade, issues keys without naming scopes.
    await db.schema
      .alterTable('api_keys')
      .addColumn('scopes', 'text', (column) => column.notNull().defaultTo('pets:read pets:write usage:read'))
      .execute();
  },
  '0008-audit-via': async (db) => {
    // Through what each change was made. An earlier entry of a token cannot tell the console from the admin
    // API and is marked api; the CLI's are cli. The default stays for an instance of the release before,
    // still running during a rolling upgrade; its CLI's entries are read as cli by their actor (sql-store.ts).
    await db.schema
      .alterTable('audit_entries')
      .addColumn('via', 'text', (column) =>
        column
          .notNull()
          .defaultTo('api')
          .check(sql`via IN ('console', 'api', 'cli')`),
      )
      .execute();
    await sql`UPDATE audit_entries SET via = 'cli' WHERE actor_kind = 'cli'`.execute(db);
    await db.schema.createIndex('audit_entries_via').on('audit_entries').columns(['via', 'at']).execute();
  },
  '0009-every-scope-marker': async (db) => {
    // A key that holds every scope of release 1.3.0 holds every scope, those added later included: it is
    // marked so (src/domain/scopes.ts). Keys issued without a choice, and those issued before scopes existed,
    // cannot be told apart from those an operator gave all three by name; all of them are marked. The texts
    // are written out: they are what release 1.3.0 stored, whatever the scopes of a later release. The
    // marker is followed by those three, which an instance of 1.3.0, still running during a rolling
    // upgrade, reads as before.
    await sql`UPDATE api_keys SET scopes = 'all pets:read pets:write usage:read'
              WHERE scopes = 'pets:read pets:write usage:read'`.execute(db);
  },
  '0010-holder-keys': async (db, dialect) => {
    // Keys an account holder manages: a name, who created and who revoked each key (null where it was not
    // kept), and each account's limit of active keys, 20 until an operator sets another.
    for (const column of ['name', 'created_by', 'revoked_by'])
      await db.schema.alterTable('api_keys').addColumn(column, 'text').execute();
    await db.schema
      .alterTable('accounts')
      .addColumn('key_limit', dialect.integerType, (column) => column.notNull().defaultTo(20))
      .execute();
    // The audit trail's actors and vias gain the holder's key.
    await widenAuditChecks(db, dialect);
  },
};

const AUDIT_ACTOR_KIND_CHECK = sql`actor_kind IN ('operator_token', 'cli', 'key')`;
const AUDIT_VIA_CHECK = sql`via IN ('console', 'api', 'cli', 'key')`;

/**
 * PostgreSQL replaces the two checks in place. SQLite cannot alter a check: the table is made
 * again with the new ones (SQLite's documented procedure), its rows and ids copied, then its indexes.
 */
async function widenAuditChecks(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  if (dialect.backend === 'postgres') {
    await sql`ALTER TABLE audit_entries
                DROP CONSTRAINT audit_entries_actor_kind_check, DROP CONSTRAINT audit_entries_via_check,
                ADD CONSTRAINT audit_entries_actor_kind_check CHECK (${AUDIT_ACTOR_KIND_CHECK}),
                ADD CONSTRAINT audit_entries_via_check CHECK (${AUDIT_VIA_CHECK})`.execute(db);
    return;
  }
  const { integerType, generatedId } = dialect;
  await db.schema
    .createTable('audit_entries_next')
    .addColumn('id', integerType, generatedId)
    .addColumn('at', integerType, (column) => column.notNull())
    .addColumn('actor_kind', 'text', (column) => column.notNull().check(AUDIT_ACTOR_KIND_CHECK))
    .addColumn('actor_id', 'text', (column) => column.notNull())
    .addColumn('actor_name', 'text')
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target_type', 'text', (column) => column.notNull())
    .addColumn('target_id', 'text', (column) => column.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('request_id', 'text')
    .addColumn('via', 'text', (column) => column.notNull().defaultTo('api').check(AUDIT_VIA_CHECK))
    .execute();
  const columns = sql.raw(
    'id, at, actor_kind, actor_id, actor_name, action, target_type, target_id, before, after, request_id, via',
  );
  await sql`INSERT INTO audit_entries_next (${columns}) SELECT ${columns} FROM audit_entries`.execute(db);
  await db.schema.dropTable('audit_entries').execute();
  await db.schema.alterTable('audit_entries_next').renameTo('audit_entries').execute();
  await db.schema.createIndex('audit_entries_at').on('audit_entries').columns(['at', 'id']).execute();
  await db.schema
    .createIndex('audit_entries_actor')
    .on('audit_entries')
    .columns(['actor_kind', 'actor_id', 'at'])
    .execute();
  await db.schema
    .createIndex('audit_entries_target')
    .on('audit_entries')
    .columns(['target_type', 'target_id', 'at'])
    .execute();
  await db.schema.createIndex('audit_entries_action').on('audit_entries').columns(['action', 'at']).execute();
  await db.schema.createIndex('audit_entries_via').on('audit_entries').columns(['via', 'at']).execute();
}

export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();

/** Versions recorded in the first release's `schema_migrations` table; empty when there is none. */
async function releaseOneVersions(db: Kysely<unknown>, dialect: MigrationDialect): Promise<ReadonlySet<number>> {
  if (!(await dialect.tableExists(db, 'schema_migrations'))) return new Set();
  const { rows } = await sql<{ version: number | bigint | string }>`SELECT version FROM schema_migrations`.execute(db);
  return new Set(rows.map((row) => Number(row.version)));
}

/** Provides the migrations without reading the filesystem; notes which ones were adopted. */
class AdoptingMigrationProvider implements MigrationProvider {
  readonly adopted = new Set<string>();
  private readonly dialect: MigrationDialect;
  constructor(dialect: MigrationDialect) {
    this.dialect = dialect;
  }

  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(
      Object.entries(MIGRATIONS).map(([name, body]) => [name, { up: (db) => this.apply(name, body, db) }]),
    );
  }

  private async apply(name: string, body: MigrationBody, db: Kysely<unknown>): Promise<void> {
    const released = RELEASE_ONE_VERSIONS[name];
    if (released && (await releaseOneVersions(db, this.dialect)).has(released.version)) {
      for (const table of released.tables) {
        if (!(await this.dialect.tableExists(db, table))) {
          throw new Error(`schema_migrations records version ${released.version} but table ${table} is missing`);
        }
      }
      this.adopted.add(name);
      return;
    }
    await body(db, this.dialect);
  }
}

export interface MigrationTarget {
  readonly db: Kysely<DatabaseSchema>;
  readonly dialect: MigrationDialect;
  /**
   * Schema of Kysely's own bookkeeping tables. Needed on PostgreSQL, where Kysely would otherwise
   * take a `kysely_migration` table in any schema of the database for its own.
   */
  readonly bookkeepingSchema?: string;
  /**
   * The last migration to apply, by name; every pending one when absent. Tests use it to build a
   * database as an earlier release left it, and then upgrade it.
   */
  readonly through?: string | undefined;
}

/**
 * Applies pending migrations in one transaction under the backend's migration lock; returns how
 * many ran (adopted ones do not count: nothing was applied to the database).
 */
export async function applyMigrations(target: MigrationTarget): Promise<number> {
  const { through } = target;
  if (through !== undefined && !MIGRATION_NAMES.includes(through)) {
    throw new Error(`no migration is named '${through}'; the migrations are ${MIGRATION_NAMES.join(', ')}`);
  }
  const provider = new AdoptingMigrationProvider(target.dialect);
  const migrator = new Migrator({
    db: target.db,
    provider,
    ...(target.bookkeepingSchema === undefined ? {} : { migrationTableSchema: target.bookkeepingSchema }),
  });
  const { error, results = [] } = await (through === undefined
    ? migrator.migrateToLatest()
    : migrator.migrateTo(through));
  if (error !== undefined) throw error;
  return results.filter((result) => result.status === 'Success' && !provider.adopted.has(result.migrationName)).length;
}
