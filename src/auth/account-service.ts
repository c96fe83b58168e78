import type { Clock } from '../clock.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { PLANS, type Plan } from '../domain/plans.ts';
import {
  type AccountKeyStats,
  type AccountPageQuery,
  type AccountRecord,
  type ActiveBan,
  type ApiKeyRecord,
  type KeyPageQuery,
  type Store,
} from '../storage/store.ts';
import { generateApiKey, generateKeyId, hashApiKey } from './api-key.ts';

export interface PlanChoice {
  readonly plan: string;
  readonly perMinute?: number | undefined;
  readonly perDay?: number | undefined;
  /** How messages name the two limits: the CLI's flags (the default), or the admin API's fields. */
  readonly naming?: 'flags' | 'fields';
}

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

const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const DEMO_ACCOUNT = 'demo';

/** Accounts, plans and keys: what operators manage through the CLI. */
export class AccountService {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly limiterBans: BanLifter | undefined;

  constructor(store: Store, clock: Clock, limiterBans?: BanLifter) {
    this.store = store;
    this.clock = clock;
    this.limiterBans = limiterBans;
  }

  async createAccount(name: string, choice: PlanChoice): Promise<AccountRecord> {
    if (!ACCOUNT_NAME.test(name)) {
      throw new ValidationError(
        'invalid_body',
        'account name must be 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit',
      );
    }
    const plan = checkPlan(choice);
    return this.store.accounts.create({ name, ...plan }, this.clock.now());
  }

  async setPlan(name: string, choice: PlanChoice): Promise<AccountRecord> {
    const plan = checkPlan(choice);
    const account = await this.store.accounts.setPlan(name, plan.plan, plan.perMinute, plan.perDay);
    if (!account) throw new NotFoundError(`no account named '${name}'`);
    return account;
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

  async createKey(accountName: string, expiresInMs?: number): Promise<CreatedKey> {
    const account = await this.requireAccount(accountName);
    const key = generateApiKey();
    const now = this.clock.now();
    const record = await this.store.keys.create(
      {
        id: generateKeyId(),
        accountId: account.id,
        hash: hashApiKey(key),
        expiresAt: expiresInMs === undefined ? null : now + expiresInMs,
      },
      now,
    );
    return { key, record };
  }

  async listKeys(accountName: string): Promise<ApiKeyRecord[]> {
    const account = await this.requireAccount(accountName);
    return this.store.keys.listForAccount(account.id);
  }

  async revokeKey(keyId: string): Promise<ApiKeyRecord> {
    if (!(await this.store.keys.revoke(keyId, this.clock.now()))) throw new NotFoundError(`no key with id '${keyId}'`);
    const record = await this.store.keys.findById(keyId);
    if (!record) throw new NotFoundError(`no key with id '${keyId}'`);
    return record;
  }

  /**
   * Ends the key's ban in storage and in the limiter: at once in this process and, through a shared
   * limiter (Redis), on every instance; the others notice it in storage within one second.
   */
  async liftBan(keyId: string): Promise<ApiKeyRecord> {
    const record = await this.store.keys.findById(keyId);
    if (!record) throw new NotFoundError(`no key with id '${keyId}'`);
    const inStorage = await this.store.bans.lift(keyId, this.clock.now());
    // Also when storage had none: a ban whose record failed lives only in the limiter.
    const inLimiter = (await this.limiterBans?.liftBan({ keyId, accountId: record.accountId })) ?? false;
    if (!inStorage && !inLimiter) throw new NotFoundError(`key '${keyId}' is not banned`);
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

  private async requireAccount(name: string): Promise<AccountRecord> {
    const account = await this.store.accounts.findByName(name);
    if (!account) throw new NotFoundError(`no account named '${name}'`);
    return account;
  }
}

/** `found`, read with one more than `limit`, as a page: the one more only tells that more follow. */
function pageOf<T>(found: T[], limit: number): Page<T> {
  return { items: found.slice(0, limit), more: found.length > limit };
}

const LIMIT_NAMES = {
  flags: { perMinute: '--per-minute', perDay: '--per-day' },
  fields: { perMinute: 'perMinute', perDay: 'perDay' },
} as const;

function checkPlan(choice: PlanChoice): { plan: Plan; perMinute: number | null; perDay: number | null } {
  const plan = PLANS.find((candidate) => candidate === choice.plan);
  if (!plan)
    throw new ValidationError('invalid_body', `plan must be one of ${PLANS.join(', ')} (got '${choice.plan}')`);
  const { perMinute, perDay } = choice;
  const names = LIMIT_NAMES[choice.naming ?? 'flags'];
  if (plan !== 'enterprise') {
    if (perMinute !== undefined || perDay !== undefined) {
      throw new ValidationError(
        'invalid_body',
        `${names.perMinute} and ${names.perDay} apply only to the enterprise plan`,
      );
    }
    return { plan, perMinute: null, perDay: null };
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new ValidationError('invalid_body', `the enterprise plan needs both ${names.perMinute} and ${names.perDay}`);
  }
  for (const [flag, value] of [
    [names.perMinute, perMinute],
    [names.perDay, perDay],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new ValidationError('invalid_body', `${flag} must be a positive integer`);
  }
  return { plan, perMinute, perDay };
}
