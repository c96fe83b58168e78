import { linkTarget } from './link-header.ts';

/** Type and code of the warning, so that a program can recognise or silence it. */
export const DEPRECATION_WARNING_TYPE = 'PetstoreDeprecationWarning';
export const DEPRECATION_WARNING_CODE = 'PETSTORE_GET_PET_DEPRECATED';

/** What to call instead. */
const REPLACEMENT = 'GET /v1/pets with the status filter (client.pets.list({ status }))';

/** How many keys the warning names; the others are counted. */
const KEYS_NAMED = 5;

interface WarningProcess {
  emitWarning(message: string, options: { type: string; code: string }): void;
}

/** Reads `GET /v1/usage` once; whatever it answers, or however it fails, the warning is still given. */
export type UsageReader = () => Promise<unknown>;

interface KeyCalls {
  readonly id: string;
  readonly calls: number;
  readonly lastCall: string;
}

/** The account's calls of getPet in the last 30 days, from the `deprecated` list of a usage answer. */
interface Exposure {
  readonly calls: number;
  readonly keys: readonly KeyCalls[];
}

// Once per process (per loaded copy of the client), however many clients and calls there are.
let warned = false;

function emit(message: string): void {
  const host = (globalThis as { process?: Partial<WarningProcess> }).process;
  if (typeof host?.emitWarning === 'function') {
    host.emitWarning(message, { type: DEPRECATION_WARNING_TYPE, code: DEPRECATION_WARNING_CODE });
  } else {
    console.warn(`${DEPRECATION_WARNING_TYPE}: ${message}`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isKeyCalls(value: unknown): value is KeyCalls {
  return (
    isRecord(value) &&
    typeof value.id === 'string' &&
    typeof value.calls === 'number' &&
    typeof value.lastCall === 'string'
  );
}

/**
 * The getPet entry of a usage answer, checked field by field: a service older than the client sends no
 * `deprecated` list, and the warning must then fall back to its plain text rather than fail.
 */
function exposureOf(usage: unknown): Exposure | undefined {
  if (!isRecord(usage) || !Array.isArray(usage.deprecated)) return undefined;
  const entry: unknown = usage.deprecated.find((item: unknown) => isRecord(item) && item.operation === 'getPet');
  if (!isRecord(entry) || typeof entry.calls !== 'number' || !Array.isArray(entry.keys)) return undefined;
  const keys: unknown[] = entry.keys;
  if (!keys.every(isKeyCalls)) return undefined;
  return { calls: entry.calls, keys };
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** "your account made 42 such calls in the last 30 days, from 2 keys: key_abc (40, last …), key_def (2, last …)" */
function exposureText(exposure: Exposure): string {
  const calls = `your account made ${exposure.calls} such call${exposure.calls === 1 ? '' : 's'} in the last 30 days`;
  if (exposure.keys.length === 0) return calls;
  const named = exposure.keys.slice(0, KEYS_NAMED).map((key) => `${key.id} (${key.calls}, last ${key.lastCall})`);
  const others = exposure.keys.length - named.length;
  const rest = others > 0 ? `, and ${plural(others, 'other key')}` : '';
  return `${calls}, from ${plural(exposure.keys.length, 'key')}: ${named.join(', ')}${rest}`;
}

/** The warning's text; with the account's exposure when it could be read. */
function deprecationText(
  sunset: string | null,
  note: URL | undefined,
  exposure: Exposure | undefined = undefined,
): string {
  return (
    'GET /v1/pets/{petId} (client.pets.get) is deprecated' +
    (sunset === null ? '' : ` and is removed on ${sunset}`) +
    (exposure === undefined
      ? `; use ${REPLACEMENT} instead.`
      : `; ${exposureText(exposure)}. Use ${REPLACEMENT} instead.`) +
    (note === undefined ? '' : ` Migration note: ${note.href}`)
  );
}

/**
 * Warns the first time a response of `GET /v1/pets/{petId}` says that the operation is deprecated. With
 * `readUsage`, the warning waits for one read of `GET /v1/usage` and names the account's calls of the
 * operation in the last 30 days and the keys that made them, so that a developer sees the exposure of every
 * program using the account, not only of this one. The call that saw the header does not wait for it.
 */
export function warnIfDeprecated(headers: Headers, responseUrl: string, readUsage?: UsageReader): void {
  if (warned || !headers.has('deprecation')) return;
  warned = true;
  const sunset = headers.get('sunset');
  const note = linkTarget(headers, 'deprecation', responseUrl);
  if (readUsage === undefined) return emit(deprecationText(sunset, note));
  let reading: Promise<unknown>;
  try {
    reading = readUsage();
  } catch {
    reading = Promise.resolve(undefined);
  }
  reading
    .then(exposureOf, () => undefined)
    .then((exposure) => emit(deprecationText(sunset, note, exposure)))
    .catch(() => undefined);
}
