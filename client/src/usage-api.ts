import type { CallOptions } from './options.ts';
import type { Transport } from './transport.ts';
import type { Usage, UsageGranularity, UsageHistory } from './types.ts';
import { responseOf, type PetstoreResponse } from './with-response.ts';

export interface UsageHistoryOptions extends CallOptions {
  /**
   * Start of the range: a Date, or an ISO 8601 date or date-time string. Rounded down to its bucket. Default:
   * 24 hours before `to` (hourly), 30 days before it (daily).
   */
  readonly from?: Date | string | undefined;
  /** End of the range, exclusive: a Date or an ISO 8601 string; rounded up to its bucket. Default: now. */
  readonly to?: Date | string | undefined;
  /** `hour` (the service's default) or `day`, in UTC. */
  readonly granularity?: UsageGranularity | undefined;
}

/**
 * The usage of the caller's account; neither call counts against the account's quota. Called itself, it reads
 * `GET /v1/usage`.
 */
export interface UsageApi {
  /** The account, plan, both windows, the key's state, and the account's calls of deprecated operations. */
  (options?: CallOptions): Promise<Usage>;
  /** The account's requests per UTC hour or day, by operation and outcome, in `[from, to)` (at most 90 days). */
  history(options?: UsageHistoryOptions): Promise<UsageHistory>;
}

/** `UsageApi`, each call giving its result with the metadata of its answer (`client.withResponse.usage`). */
export interface UsageWithResponseApi {
  (options?: CallOptions): Promise<PetstoreResponse<Usage>>;
  history(options?: UsageHistoryOptions): Promise<PetstoreResponse<UsageHistory>>;
}

function instantText(name: string, value: Date | string): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError(`${name} is an invalid Date`);
    return value.toISOString();
  }
  if (typeof value !== 'string') throw new TypeError(`${name} must be a Date or an ISO 8601 string`);
  return value;
}

function historyQuery(options: UsageHistoryOptions): string {
  const query = new URLSearchParams();
  if (options.from !== undefined) query.set('from', instantText('from', options.from));
  if (options.to !== undefined) query.set('to', instantText('to', options.to));
  if (options.granularity !== undefined) query.set('granularity', options.granularity);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

export function usageWithResponseApi(transport: Transport): UsageWithResponseApi {
  const read = async (options: CallOptions = {}): Promise<PetstoreResponse<Usage>> => {
    const answer = await transport.send({ method: 'GET', path: '/usage', spendsQuota: false, options });
    return responseOf(answer, answer.body as Usage);
  };
  const history = async (options: UsageHistoryOptions = {}): Promise<PetstoreResponse<UsageHistory>> => {
    const path = `/usage/history${historyQuery(options)}`;
    const answer = await transport.send({ method: 'GET', path, spendsQuota: false, options });
    return responseOf(answer, answer.body as UsageHistory);
  };
  return Object.assign(read, { history });
}

export function usageApi(withResponse: UsageWithResponseApi): UsageApi {
  const read = async (options: CallOptions = {}): Promise<Usage> => (await withResponse(options)).data;
  const history = async (options: UsageHistoryOptions = {}): Promise<UsageHistory> =>
    (await withResponse.history(options)).data;
  return Object.assign(read, { history });
}
