import assert from 'node:assert/strict';
import { MID } from '../ratelimit/rate-limit-assertions.ts';
import { request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import type { BackendPair } from '../support/test-app.ts';
import { operatorAppForSuite, type OperatorTestApp } from './operator-app.ts';

/**
 * What the admin API's tests send and read: its resources as its document has them, and calls made
 * with the app's operator token. Every answer is checked against that document by `request()`.
 */

export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const DAY_MS = 86_400_000;
/** The scopes of a key issued without a choice. */
export const ALL_SCOPES = ['pets:read', 'pets:write', 'usage:read'];

export interface Key {
  readonly id: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
  readonly lastUsedAt: string | null;
  readonly bannedUntil: string | null;
  readonly scopes: readonly string[];
  readonly state: 'active' | 'revoked' | 'expired' | 'banned';
  readonly name: string | null;
  readonly createdBy: { readonly kind: string; readonly id?: string } | null;
  readonly revokedBy: { readonly kind: string; readonly id?: string } | null;
}

export interface OperatorToken {
  readonly id: string;
  readonly name: string | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

export interface Account {
  readonly name: string;
  readonly plan: string;
  readonly limits: { readonly perMinute: number; readonly perDay: number };
  readonly today: { readonly used: number | null; readonly limit: number };
  readonly keys: { readonly total: number; readonly active: number };
  readonly lastUsedAt: string | null;
  readonly createdAt: string;
  readonly keyLimit: number;
}

export interface History {
  readonly from: string;
  readonly to: string;
  readonly granularity: string;
  readonly points: ReadonlyArray<{ at: string; operation: string; outcome: string; count: number }>;
}

let unique = 0;
/** A name no other test of the run has (account names, stems of several): `${prefix}-${pid}-${n}`. */
export function uniqueName(prefix: string): string {
  unique += 1;
  return `${prefix}-${process.pid}-${unique}`;
}

export function accountName(): string {
  return uniqueName('admin');
}

/** The body of an answer of `status`, which an admin answer never lets a cache keep. */
export function ok<T>(answer: HttpAnswer, status = 200): T {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.headers.get('cache-control'), 'no-store');
  return answer.json<T>();
}

export const namesOf = (accounts: readonly Account[]): string[] => accounts.map((account) => account.name);

export interface AdminCalls {
  /** A request to the operator listener with the operator token. */
  admin(path: string, options?: HttpRequest): Promise<HttpAnswer>;
  /** A new account of `plan` (with `limits` for enterprise); its name. */
  newAccount(plan?: string, limits?: { perMinute?: number; perDay?: number }): Promise<string>;
  /** A key issued to `account`, with `body` as the issuing request's if given. */
  newKey(account: string, body?: unknown): Promise<Key & { key: string }>;
  /** Every page of a list, following nextCursor from `path` (which has a query already). */
  everyPage<T>(path: string, items: 'accounts' | 'keys'): Promise<{ pages: T[][]; cursors: string[] }>;
}

export function adminCalls(app: OperatorTestApp): AdminCalls {
  const admin = (path: string, options: HttpRequest = {}): Promise<HttpAnswer> =>
    request(app.operator, path, { key: app.token, ...options });
  return {
    admin,
    async newAccount(plan = 'free', limits = {}) {
      const name = accountName();
      ok(await admin('/admin/v1/accounts', { method: 'POST', json: { name, plan, ...limits } }), 201);
      return name;
    },
    async newKey(account, body) {
      const path = `/admin/v1/accounts/${account}/keys`;
      return ok(await admin(path, { method: 'POST', ...(body === undefined ? {} : { json: body }) }), 201);
    },
    async everyPage<T>(path: string, items: 'accounts' | 'keys') {
      const pages: T[][] = [];
      const cursors: string[] = [];
      for (let cursor: string | null = null; pages.length === 0 || cursor !== null;) {
        const suffix: string = cursor === null ? '' : `&cursor=${cursor}`;
        const page = ok<Record<typeof items, T[]> & { nextCursor: string | null }>(await admin(`${path}${suffix}`));
        pages.push(page[items]);
        cursor = page.nextCursor;
        if (cursor !== null) cursors.push(cursor);
        assert.ok(pages.length <= 100, 'the pages end');
      }
      return { pages, cursors };
    },
  };
}

/**
 * The suite's operator app on `backend`, its clock (at MID to begin with) and the admin calls, for
 * a suite of the admin API's tests. Bans come at the first limited answer (BAN_THRESHOLD=1).
 */
export function adminApiForSuite(backend: BackendPair): AdminCalls & { app: OperatorTestApp; clock: ManualClock } {
  const clock = new ManualClock(MID);
  const app = operatorAppForSuite({ backend, clock, env: { BAN_THRESHOLD: '1' } });
  return { app, clock, ...adminCalls(app) };
}
