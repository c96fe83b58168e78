import type { AccountService } from '../../auth/account-service.ts';
import type { Clock } from '../../clock.ts';
import { NotFoundError } from '../../errors.ts';
import type { RateLimiter } from '../../ratelimit/limiter.ts';
import type { AccountQuotas } from '../../ratelimit/account-quotas.ts';
import type { AccountKeyStats, AccountRecord } from '../../domain/accounts.ts';
import type { AdminAccount, AdminAccountDetail } from './admin-schemas.ts';
import { iso, isoOrNull, keyElement } from './admin-views.ts';

export async function requireAccount(accounts: AccountService, name: string): Promise<AccountRecord> {
  const account = await accounts.findAccount(name);
  if (!account) throw new NotFoundError(`no account named '${name}'`);
  return account;
}

/** What the presenter reads. */
export interface AccountPresenterOptions {
  readonly accounts: AccountService;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly quotas: AccountQuotas;
}

/** Accounts as the admin API shows them, with today's use read from the limiter. */
export class AccountPresenter {
  private readonly options: AccountPresenterOptions;
  /** Where the day window is among an account's windows. */
  private readonly day: number;

  constructor(options: AccountPresenterOptions) {
    this.options = options;
    this.day = options.quotas.indexOf('perDay');
  }

  async account(account: AccountRecord, keys: AccountKeyStats): Promise<AdminAccount> {
    return this.view(account, { total: keys.total, active: keys.active }, keys.lastUsedAt);
  }

  /** The account as AccountService.describeAccount sums it up. */
  async described(name: string): Promise<AdminAccount> {
    const summary = await this.options.accounts.describeAccount(name);
    const keys = { total: summary.keys, active: summary.activeKeys, lastUsedAt: summary.lastUsedAt };
    return this.account(summary.account, keys);
  }

  async detail(name: string): Promise<AdminAccountDetail> {
    const account = await requireAccount(this.options.accounts, name);
    const keys = await this.options.accounts.listKeys(name);
    const now = this.options.clock.now();
    const lastUsed = keys.reduce<number | null>(
      (latest, key) =>
        key.lastUsedAt !== null && (latest === null || key.lastUsedAt > latest) ? key.lastUsedAt : latest,
      null,
    );
    return this.view(
      account,
      keys.map((key) => keyElement(key, now)),
      lastUsed,
    );
  }

  /** The fields of both views, `keys` as each has them. */
  private async view<Keys>(account: AccountRecord, keys: Keys, lastUsedAt: number | null) {
    const limits = this.options.quotas.limitsOf(account);
    return {
      name: account.name,
      plan: account.plan,
      limits,
      today: { used: await this.usedToday(account), limit: limits.perDay },
      keys,
      lastUsedAt: isoOrNull(lastUsedAt),
      createdAt: iso(account.createdAt),
      keyLimit: account.keyLimit,
    };
  }

  /**
   * Requests counted in the account's current UTC day, peeked at without counting one: shared by
   * every instance with Redis, this instance's own without; null when Redis did not answer (its
   * stand-in, this process's memory, would give an invented number).
   */
  private async usedToday(account: AccountRecord): Promise<number | null> {
    const { subject, windows } = this.options.quotas.quotaOf(account.id, account);
    const request = { subject, windows, peek: true };
    try {
      const result = await this.options.limiter.consume(request, this.options.clock.now());
      if (result.fallback) return null;
      const day = result.windows[this.day];
      return day === undefined ? null : day.limit - day.remaining;
    } catch {
      return null;
    }
  }
}
