/** What the usage tally counts a request under: its operation and the class of its answer. */
/** `usage` counts both usage operations, `keys` every operation on the account's keys. */
export const USAGE_OPERATIONS = ['listPets', 'createPet', 'getPet', 'usage', 'keys'] as const;
export type UsageOperation = (typeof USAGE_OPERATIONS)[number];

/** `429` is a rate-limit refusal, `banned` a refusal of a banned key; the others are status classes. */
export const USAGE_OUTCOMES = ['2xx', '4xx', '429', 'banned', '5xx'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** Outcomes that are refusals: the requests a client sent past its limits. */
export const REFUSAL_OUTCOMES: readonly UsageOutcome[] = ['429', 'banned'];

export type Granularity = 'hour' | 'day';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export const bucketMsOf = (granularity: Granularity): number => (granularity === 'hour' ? HOUR_MS : DAY_MS);

/** The start of the UTC hour (or day) that holds `at`. */
export const bucketStart = (at: number, bucketMs: number): number => Math.floor(at / bucketMs) * bucketMs;
