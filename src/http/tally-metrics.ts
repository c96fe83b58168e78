import { Counter, Histogram, type Registry } from 'prom-client';

type LabelValue = string | number;

declare module 'prom-client' {
  interface Histogram<T extends string> {
    /** Present in prom-client 15 and preferred by Registry#metrics() over get(); missing from its typings. */
    getForPromString(): ReturnType<Histogram<T>['get']>;
  }
}

interface Tally {
  count: number;
  /** How much of `count` prom-client has already been given. */
  published: number;
}

/** One level per label: label value → next level, and at the last label, the tally. */
type Level = Map<LabelValue, Level | Tally>;

export interface TallyCounterConfiguration<L extends string> {
  readonly name: string;
  readonly help: string;
  /** One to three labels; `inc` takes their values in this order. */
  readonly labelNames: readonly L[];
  readonly registers: Registry[];
}

/**
 * A Prometheus counter for the per-request path: counts are kept in nested maps by label value and
 * handed to a prom-client Counter when it is collected, i.e. on scrape. Why: Counter.inc builds and
 * hashes a label string on every call, ~2% of a cached GET's CPU in `npm run bench`; here a count
 * is one map lookup per label. Label values must come from bounded sets (route templates, methods,
 * statuses, account names), as with any Prometheus label.
 */
export class TallyCounter<L extends string> {
  /** The prom-client counter, registered; up to date whenever it is collected. */
  readonly counter: Counter<L>;
  readonly #labelNames: readonly L[];
  readonly #root: Level = new Map();

  constructor(configuration: TallyCounterConfiguration<L>) {
    if (configuration.labelNames.length < 1 || configuration.labelNames.length > 3)
      throw new Error('a TallyCounter has one to three labels');
    this.#labelNames = configuration.labelNames;
    const publish = (counter: Counter<L>): void => this.#publish(counter, this.#root, 0, {});
    this.counter = new Counter<L>({
      name: configuration.name,
      help: configuration.help,
      labelNames: configuration.labelNames,
      registers: configuration.registers,
      collect() {
        publish(this);
      },
    });
  }

  /** Counts one event with these label values, in the order of `labelNames`. */
  inc(first: LabelValue, second?: LabelValue, third?: LabelValue): void {
    const depth = this.#labelNames.length;
    let level = this.#root;
    for (let index = 0; index < depth - 1; index += 1) {
      const value = (index === 0 ? first : second) as LabelValue;
      let next = level.get(value) as Level | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const last = (depth === 1 ? first : depth === 2 ? second : third) as LabelValue;
    const tally = level.get(last) as Tally | undefined;
    if (tally === undefined) level.set(last, { count: 1, published: 0 });
    else tally.count += 1;
  }

  #publish(counter: Counter<L>, level: Level, index: number, labels: Partial<Record<L, LabelValue>>): void {
    const name = this.#labelNames[index] as L;
    const isLast = index === this.#labelNames.length - 1;
    for (const [value, entry] of level) {
      const withValue = { ...labels, [name]: value };
      if (!isLast) {
        this.#publish(counter, entry as Level, index + 1, withValue);
        continue;
      }
      const tally = entry as Tally;
      if (tally.count === tally.published) continue;
      counter.inc(withValue, tally.count - tally.published);
      tally.published = tally.count;
    }
  }
}

type SeriesLabels<L extends string> = Partial<Record<L | 'le', LabelValue>>;

interface DurationTally<L extends string> {
  readonly labels: SeriesLabels<L>;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

export interface TallyHistogramConfiguration<L extends string> {
  readonly name: string;
  readonly help: string;
  /** Exactly two labels; `observe` takes their values in this order. */
  readonly labelNames: readonly [L, L];
  readonly buckets: readonly number[];
  readonly registers: Registry[];
}

/**
 * A Prometheus histogram for the per-request path, for the reason TallyCounter gives (prom-client's
 * observe hashed a label string per request, ~3% of a cached GET's CPU). Observations land in plain
 * bucket arrays found by two map lookups; prom-client's Histogram is extended only to report them
 * (its own observe() is left unused), so the registry formats them like any other histogram.
 */
export class TallyHistogram<L extends string> extends Histogram<L | 'le'> {
  readonly #name: string;
  readonly #labelNames: readonly [L, L];
  readonly #bounds: readonly number[];
  readonly #series = new Map<LabelValue, Map<LabelValue, DurationTally<L>>>();
  /** The same tallies in the order they were first seen, the order they are reported in. */
  readonly #seen: Array<DurationTally<L>> = [];

  constructor(configuration: TallyHistogramConfiguration<L>) {
    super({
      name: configuration.name,
      help: configuration.help,
      labelNames: configuration.labelNames,
      buckets: [...configuration.buckets],
      registers: configuration.registers,
    });
    this.#name = configuration.name;
    this.#labelNames = configuration.labelNames;
    this.#bounds = [...configuration.buckets].sort((a, b) => a - b);
  }

  /** Records one observation; named apart from observe(), which keeps prom-client's own (slow) path. */
  record(first: LabelValue, second: LabelValue, value: number): void {
    let inner = this.#series.get(first);
    if (inner === undefined) {
      inner = new Map();
      this.#series.set(first, inner);
    }
    let tally = inner.get(second);
    if (tally === undefined) {
      const labels: SeriesLabels<L> = {};
      labels[this.#labelNames[0]] = first;
      labels[this.#labelNames[1]] = second;
      tally = { labels, buckets: new Array<number>(this.#bounds.length + 1).fill(0), sum: 0, count: 0 };
      inner.set(second, tally);
      this.#seen.push(tally);
    }
    let bucket = 0;
    while (bucket < this.#bounds.length && value > (this.#bounds[bucket] as number)) bucket += 1;
    tally.buckets[bucket] = (tally.buckets[bucket] ?? 0) + 1;
    tally.sum += value;
    tally.count += 1;
  }

  /** What the registry formats on scrape: prom-client's metadata, with the record()ed series. */
  override async getForPromString(): ReturnType<Histogram<L | 'le'>['get']> {
    const own = await super.getForPromString();
    return { ...own, values: this.#values() };
  }

  override async get(): ReturnType<Histogram<L | 'le'>['get']> {
    return this.getForPromString();
  }

  #values(): Array<{ labels: SeriesLabels<L>; value: number; metricName: string }> {
    const values: Array<{ labels: SeriesLabels<L>; value: number; metricName: string }> = [];
    for (const tally of this.#seen) {
      let cumulative = 0;
      this.#bounds.forEach((bound, index) => {
        cumulative += tally.buckets[index] ?? 0;
        values.push({ labels: { le: bound, ...tally.labels }, value: cumulative, metricName: `${this.#name}_bucket` });
      });
      values.push(
        { labels: { le: '+Inf', ...tally.labels }, value: tally.count, metricName: `${this.#name}_bucket` },
        { labels: { ...tally.labels }, value: tally.sum, metricName: `${this.#name}_sum` },
        { labels: { ...tally.labels }, value: tally.count, metricName: `${this.#name}_count` },
      );
    }
    return values;
  }
}
