import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one app instance; a registry per app keeps tests independent. */
export interface Metrics {
  readonly registry: Registry;
  readonly deprecatedCalls: Counter<'account'>;
  readonly rateLimited: Counter<'reason'>;
  readonly limiterFallbacks: Counter;
  readonly usageFlushes: Counter<'result'>;
  readonly usageFlushedRows: Counter;
  readonly usageUncounted: Counter;
  readonly usageUnattributed: Counter<'operation' | 'outcome'>;
  readonly storageUnavailable: Counter;
  /** Counts one answer (petstore_http_requests_total) and observes its time in seconds (…_request_duration_seconds). */
  readonly answered: (method: string, route: string, status: number, seconds: number) => void;
}

/** One answer's children of the request counter and the duration histogram, for one method, route and status. */
interface AnswerSeries {
  readonly requests: Counter.Internal;
  readonly duration: Histogram.Internal<'method' | 'route'>;
}

export function createMetrics(options: { collectProcessMetrics: boolean }): Metrics {
  const registry = new Registry();
  if (options.collectProcessMetrics) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'petstore_http_requests_total',
    help: 'Requests answered, by route and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'Time to answer a request.',
    labelNames: ['method', 'route'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return {
    registry,
    answered: answerCounter(requests, duration),
    deprecatedCalls: new Counter({
      name: 'petstore_deprecated_calls_total',
      help: 'Calls to the deprecated GET /v1/pets/{petId}, per account, so operators know who must migrate.',
      labelNames: ['account'],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'petstore_rate_limited_total',
      help: 'Requests refused with 429, by reason.',
      labelNames: ['reason'],
      registers: [registry],
    }),
    limiterFallbacks: new Counter({
      name: 'petstore_limiter_fallback_total',
      help: 'Requests limited in-process because the shared limiter (Redis) was unreachable.',
      registers: [registry],
    }),
    usageFlushes: new Counter({
      name: 'petstore_usage_flushes_total',
      help:
        "Flushes of the usage tally to storage, by result: written, skipped (this instance's storage connection " +
        'busy) or failed (storage refused or did not answer); the counts not stored are kept for the next flush.',
      labelNames: ['result'],
      registers: [registry],
    }),
    usageFlushedRows: new Counter({
      name: 'petstore_usage_flushed_rows_total',
      help: 'Rows (account, key, operation, outcome, hour) added to the usage history.',
      registers: [registry],
    }),
    usageUncounted: new Counter({
      name: 'petstore_usage_uncounted_total',
      help: 'Requests left out of the usage history because the tally was full while storage refused flushes.',
      registers: [registry],
    }),
    usageUnattributed: new Counter({
      name: 'petstore_usage_unattributed_total',
      help:
        "Answers of a usage operation that no account's usage history counts, by operation and outcome: the key " +
        'was missing or not valid, or storage could not verify a key this instance had not verified before.',
      labelNames: ['operation', 'outcome'],
      registers: [registry],
    }),
    storageUnavailable: new Counter({
      name: 'petstore_storage_unavailable_total',
      help: 'Requests answered 503 because storage did not answer in time or refused (not those refused at shutdown).',
      registers: [registry],
    }),
  };
}

/**
 * Keeps each method, route and status's series children, so that an answer does not hash its labels
 * again: prom-client hashes a label object on every `inc` and `observe` given one, which took about 3%
 * of a cached read's CPU in a profile of the service. The keys are bounded: the routes are the app's own (or
 * 'unmatched'), the methods those HTTP's parser accepts, the statuses those the service sends.
 */
function answerCounter(
  requests: Counter<'method' | 'route' | 'status'>,
  duration: Histogram<'method' | 'route'>,
): Metrics['answered'] {
  const seriesByAnswer = new Map<string, AnswerSeries>();
  return (method, route, status, seconds) => {
    const answer = `${status} ${method} ${route}`;
    let series = seriesByAnswer.get(answer);
    if (series === undefined) {
      series = { requests: requests.labels({ method, route, status }), duration: duration.labels({ method, route }) };
      seriesByAnswer.set(answer, series);
    }
    series.requests.inc();
    series.duration.observe(seconds);
  };
}
