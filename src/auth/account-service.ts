import type { Clock } from '../clock.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { ACCOUNT_NAME_PATTERN, ACCOUNT_NAME_RULE } from '../domain/account-names.ts';
import { auditTime, type AuditChange, type AuditContext, type AuditValues } from '../domain/audit.ts';
import {
  byWindow,
  limitsFor,
  listed,
  LIMIT_WINDOWS,
  type LimitWindow,
  type LimitWindows,
  type StoredLimits,
  type WindowField,
} from '../domain/limit-windows.ts';
import { PLANS, type Plan } from '../domain/plans.ts';
import { checkScopes } from '../domain/scopes.ts';
import { MAX_KEY_LIMIT, type AccountKeyStats, type AccountPageQuery, type AccountRecord } from '../domain/accounts.ts';
import type { AuditedTables } from '../domain/audit.ts';
import type { ActiveBan } from '../domain/bans.ts';
import type { ApiKeyRecord, KeyActor, KeyPageQuery } from '../domain/keys.ts';
import type { Store } from '../domain/store.ts';
import { generateApiKey, generateKeyId, hashApiKey } from './api-key.ts';
import { auditedChange, type ChangeDone } from '../audit/audited-change.ts';

/**
 * A plan and, on enterprise, the account's own limit in each window, by its field (`perMinute`;
 * a window a given table adds, by its own field).
 */
export type PlanChoice = { readonly [F in WindowField]?: number | undefined } & {
  readonly plan: string;
  /** How messages name the limits: the CLI's flags (the default), or the admin API's fields. */
  readonly naming?: 'flags' | 'fields';
};

/** An account with what its keys add up to, for listings. */
export interface AccountWithKeys {
  readonly account: AccountRecord;
  readonly keys: AccountKeyStats;
}

/** Up to a page's limit of items, and whether more follow them. */
export interface Page<T> {
  readonly items: T[];
  readonly more: boolean;
}

const NO_KEYS: AccountKeyStats = Object.freeze({ total: 0, active: 0, lastUsedAt: null });

/** What a new key is issued with. */
export interface KeyChoice {
  /** From its creation; never expires when absent. */
  readonly expiresInMs?: number | undefined;
  /** Scope names, checked (src/domain/scopes.ts); every scope when absent. */
  readonly scopes?: readonly string[] | undefined;
}

export interface CreatedKey {
  /** The plaintext key: shown once, never stored. */
  readonly key: string;
  readonly record: ApiKeyRecord;
}

/** One account as `account show` presents it. */
export interface AccountSummary {
  readonly account: AccountRecord;
  readonly keys: number;
  /** Keys neither revoked nor expired (a banned key still counts: its ban ends). */
  readonly activeKeys: number;
  /** The latest last use of any of its keys. */
  readonly lastUsedAt: number | null;
}

/** Where requests are judged: a lifting must end the ban there too, not only in storage. */
export interface BanLifter {
  /** True when a ban was in force there. */
  liftBan(key: { readonly keyId: string; readonly accountId: number }): Promise<boolean>;
}

const ACCOUNT_NAME = new RegExp(ACCOUNT_NAME_PATTERN);
export const DEMO_ACCOUNT = 'demo';

/** Accounts, plans and keys: what operators manage through the CLI. */
export class AccountService {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly limiterBans: BanLifter | undefined;
  private readonly windows: LimitWindows;

  /** `windows`: the limit windows the service runs on, whose limits an enterprise account sets. */
  constructor(store: Store, clock: Clock, limiterBans?: BanLifter, windows: LimitWindows = LIMIT_WINDOWS) {
    this.store = store;
    this.clock = clock;
    this.limiterBans = limiterBans;
    this.windows = windows;
  }

  /** `by`: who asks, recorded in the audit trail with the change (every change below takes it). */
  async createAccount(name: string, choice: PlanChoice, by?: AuditContext): Promise<AccountRecord> {
    if (!ACCOUNT_NAME.test(name)) {
      throw new ValidationError('invalid_body', `account name must be ${ACCOUNT_NAME_RULE}`);
    }
    const plan = checkPlan(this.windows, choice);
    return this.change(by, async (now, { accounts }) => {
      const account = await accounts.create({ name, ...plan }, now);
      return { result: account, change: accountChange(this.windows, 'account.create', null, account) };
    });
  }

  /** How many active keys the account may hold; its holder's keys cannot create keys past it. */
  async setKeyLimit(name: string, keyLimit: number, by?: AuditContext): Promise<AccountRecord> {
    if (!Number.isSafeInteger(keyLimit) || keyLimit < 1 || keyLimit > MAX_KEY_LIMIT)
      throw new ValidationError('invalid_body', `the key limit must be an integer from 1 to ${MAX_KEY_LIMIT}`);
    return this.change(by, async (_now, { accounts }) => {
      const before = await accounts.findByName(name);
      const account = before && (await accounts.setKeyLimit(name, keyLimit));
      if (!before || !account) throw new NotFoundError(`no account named '${name}'`);
      const target = { type: 'account', id: account.name } as const;
      const change = { action: 'account.update', target, before: { keyLimit: before.keyLimit } } as const;
      return { result: account, change: { ...change, after: { keyLimit: account.keyLimit } } };
    });
  }

  async setPlan(name: string, choice: PlanChoice, by?: AuditContext): Promise<AccountRecord> {
    const plan = checkPlan(this.windows, choice);
    return this.change(by, async (_now, { accounts }) => {
      const before = await accounts.findByName(name);
      const account = before && (await accounts.setPlan(name, plan.plan, plan));
      if (!before || !account) throw new NotFoundError(`no account named '${name}'`);
      return { result: account, change: accountChange(this.windows, 'account.update', before, account) };
    });
  }

  listAccounts(): Promise<AccountRecord[]> {
    return this.store.accounts.list();
  }

  countAccounts(): Promise<number> {
    return this.store.accounts.count();
  }

  /** A page of accounts, oldest first, with their keys counted; the query's `nameContains` filters them. */
  async pageAccounts(query: AccountPageQuery): Promise<Page<AccountWithKeys>> {
    const { items, more } = pageOf(await this.store.accounts.page({ ...query, limit: query.limit + 1 }), query.limit);
    const ids = items.map((account) => account.id);
    const stats = await this.store.accounts.keyStats(this.clock.now(), ids);
    return { items: items.map((account) => ({ account, keys: stats.get(account.id) ?? NO_KEYS })), more };
  }

  /** A page of the account's keys, in the order of listKeys. */
  async pageKeys(accountName: string, page: Omit<KeyPageQuery, 'accountId'>): Promise<Page<ApiKeyRecord>> {
    const account = await this.requireAccount(accountName);
    const found = await this.store.keys.pageForAccount({ ...page, accountId: account.id, limit: page.limit + 1 });
    return pageOf(found, page.limit);
  }

  /** Bans in force now, newest first, with their keys' accounts. */
  listActiveBans(): Promise<ActiveBan[]> {
    return this.store.bans.listActive(this.clock.now());
  }

  async findKey(keyId: string): Promise<ApiKeyRecord> {
    const record = await this.store.keys.findById(keyId);
    if (!record) throw new NotFoundError(`no key with id '${keyId}'`);
    return record;
  }

  findAccount(name: string): Promise<AccountRecord | undefined> {
    return this.store.accounts.findByName(name);
  }

  async describeAccount(name: string): Promise<AccountSummary> {
    const account = await this.requireAccount(name);
    const keys = await this.store.keys.listForAccount(account.id);
    const now = this.clock.now();
    const active = keys.filter((key) => key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now));
    const lastUses = keys.flatMap((key) => (key.lastUsedAt === null ? [] : [key.lastUsedAt]));
    const lastUsedAt = lastUses.length === 0 ? null : Math.max(...lastUses);
    return { account, keys: keys.length, activeKeys: active.length, lastUsedAt };
  }

  async createKey(accountName: string, choice: KeyChoice = {}, by?: AuditContext): Promise<CreatedKey> {
    const { expiresInMs } = choice;
    // Absent, the store gives the key every scope (NewApiKey).
    const scopes = choice.scopes === undefined ? undefined : checkScopes(choice.scopes);
    const key = generateApiKey();
    return this.change(by, async (now, { accounts, keys }) => {
      const account = await accounts.findByName(accountName);
      if (!account) throw new NotFoundError(`no account named '${accountName}'`);
      const record = await keys.create(
        {
          id: generateKeyId(),
          accountId: account.id,
          hash: hashApiKey(key),
          expiresAt: expiresInMs === undefined ? null : now + expiresInMs,
          scopes,
          createdBy: keyActorOf(by),
        },
        now,
      );
      const after = { account: account.name, expiresAt: auditTime(record.expiresAt), scopes: [...record.scopes] };
      return { result: { key, record }, change: keyChange('key.create', record.id, null, after) };
    });
  }

  async listKeys(accountName: string): Promise<ApiKeyRecord[]> {
    const account = await this.requireAccount(accountName);
    return this.store.keys.listForAccount(account.id);
  }

  async revokeKey(keyId: string, by?: AuditContext): Promise<ApiKeyRecord> {
    return this.change(by, async (now, { keys }) => {
      const before = await keys.findById(keyId);
      const after = before && (await keys.revoke(keyId, now, keyActorOf(by))) ? await keys.findById(keyId) : undefined;
      if (!before || !after) throw new NotFoundError(`no key with id '${keyId}'`);
      const revoked = (key: ApiKeyRecord) => ({ revokedAt: auditTime(key.revokedAt) });
      return { result: after, change: keyChange('key.revoke', keyId, revoked(before), revoked(after)) };
    });
  }

  /**
   * Ends the key's ban in storage and in the limiter: at once in this process and, through a shared
   * limiter (Redis), on every instance; the others notice it in storage within one second. A ban
   * recorded in storage is lifted and recorded in the audit trail in one transaction; a ban held by
   * the limiter alone (its record failed) is recorded right after the limiter ended it.
   */
  async liftBan(keyId: string, by?: AuditContext): Promise<ApiKeyRecord> {
    const now = this.clock.now();
    // The end before is storage's; null for a ban the limiter alone held.
    const lifting = (until: number | null) =>
      keyChange('ban.lift', keyId, { bannedUntil: auditTime(until) }, { bannedUntil: null });
    const { record, inStorage } = await auditedChange(this.store.audit, by, now, async ({ keys, bans }) => {
      const found = await keys.findById(keyId);
      if (!found) throw new NotFoundError(`no key with id '${keyId}'`);
      const lifted = await bans.lift(keyId, now);
      return { result: { record: found, inStorage: lifted }, change: lifted ? lifting(found.bannedUntil) : undefined };
    });
    // Also when storage had none: a ban whose record failed lives only in the limiter.
    const inLimiter = (await this.limiterBans?.liftBan({ keyId, accountId: record.accountId })) ?? false;
    if (!inStorage && !inLimiter) throw new NotFoundError(`key '${keyId}' is not banned`);
    if (!inStorage && by !== undefined) await this.store.audit.record({ at: now, ...by, ...lifting(null) });
    return (await this.store.keys.findById(keyId)) ?? record;
  }

  /**
   * On first start with an empty store: the `demo` account on the free plan and one key for it.
   * Returns the plaintext key, or undefined when accounts already exist.
   */
  async bootstrapDemo(): Promise<CreatedKey | undefined> {
    if ((await this.store.accounts.count()) > 0) return undefined;
    try {
      await this.createAccount(DEMO_ACCOUNT, { plan: 'free' });
    } catch (error) {
      // Another instance starting at the same moment won the race; it prints the key.
      if (error instanceof ConflictError) return undefined;
      throw error;
    }
    return this.createKey(DEMO_ACCOUNT);
  }

  /** The change, at the clock's time, in one transaction with its audit entry when `by` is known. */
  private change<T>(
    by: AuditContext | undefined,
    work: (now: number, tables: AuditedTables) => Promise<ChangeDone<T>>,
  ): Promise<T> {
    const now = this.clock.now();
    return auditedChange(this.store.audit, by, now, (tables) => work(now, tables));
  }

  private async requireAccount(name: string): Promise<AccountRecord> {
    const account = await this.store.accounts.findByName(name);
    if (!account) throw new NotFoundError(`no account named '${name}'`);
    return account;
  }
}

/** Who a key's record names as its creator or revoker, from who made the change; null when unknown. */
export function keyActorOf(by: AuditContext | undefined): KeyActor | null {
  if (by === undefined) return null;
  const { actor } = by;
  return actor.kind === 'cli' ? { kind: 'cli', user: actor.user } : { kind: actor.kind, id: actor.id };
}

/** `found`, read with one more than `limit`, as a page: the one more only tells that more follow. */
function pageOf<T>(found: T[], limit: number): Page<T> {
  return { items: found.slice(0, limit), more: found.length > limit };
}

/** An account's plan and its effective limits, as the audit trail shows them before and after a change. */
function planValues(windows: LimitWindows, account: AccountRecord): AuditValues {
  return { plan: account.plan, limits: { ...limitsFor(windows, account) } };
}

function accountChange(
  windows: LimitWindows,
  action: 'account.create' | 'account.update',
  before: AccountRecord | null,
  after: AccountRecord,
): AuditChange {
  const target = { type: 'account', id: after.name } as const;
  const values = (account: AccountRecord) => planValues(windows, account);
  return { action, target, before: before === null ? null : values(before), after: values(after) };
}

function keyChange(
  action: 'key.create' | 'key.revoke' | 'ban.lift',
  keyId: string,
  before: AuditValues | null,
  after: AuditValues,
): AuditChange {
  return { action, target: { type: 'key', id: keyId }, before, after };
}

/** A plan, checked, with the account's own limits: set on enterprise, null in every window on any other plan. */
type CheckedPlan = { readonly plan: Plan } & StoredLimits;

/** The limits a choice names, by field: `perMinute` from the admin API's body, or the CLI's `--per-minute`. */
function chosenLimit(choice: PlanChoice, window: LimitWindow): unknown {
  const given: Readonly<Record<string, unknown>> = choice;
  return given[window.field];
}

function checkPlan(windows: LimitWindows, choice: PlanChoice): CheckedPlan {
  const plan = PLANS.find((candidate) => candidate === choice.plan);
  if (!plan)
    throw new ValidationError('invalid_body', `plan must be one of ${PLANS.join(', ')} (got '${choice.plan}')`);
  const nameOf = (window: LimitWindow) => ((choice.naming ?? 'flags') === 'flags' ? `--${window.flag}` : window.field);
  const names = listed(windows.map(nameOf));
  const given = windows.filter((window) => chosenLimit(choice, window) !== undefined);
  if (plan !== 'enterprise') {
    if (given.length > 0) throw new ValidationError('invalid_body', `${names} apply only to the enterprise plan`);
    return { plan, ...byWindow(windows, 'field', () => null) };
  }
  if (given.length < windows.length) {
    const every = windows.length === 2 ? `both ${names}` : names;
    throw new ValidationError('invalid_body', `the enterprise plan needs ${every}`);
  }
  return {
    plan,
    ...byWindow(windows, 'field', (window) => positiveLimit(chosenLimit(choice, window), nameOf(window))),
  };
}

function positiveLimit(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new ValidationError('invalid_body', `${name} must be a positive integer`);
  return value;
}
