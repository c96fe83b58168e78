import fc from 'fast-check';
import { METHODS } from 'node:http';
import { KEY_SCOPES } from '../../src/domain/scopes.ts';
import { HTTP_ERROR_CODES } from '../../src/errors.ts';
import {
  FOREIGN_CHARSETS,
  type DefectClass,
  type FuzzAnswer,
  type FuzzKeys,
  type FuzzRequest,
  type Verdict,
} from './fuzz-cases.ts';
import { fuzzRequestArbitrary } from './fuzz-generators.ts';
import { NoAnswerError, sendFuzzRequest } from './fuzz-sender.ts';
import { startTestApp, type BackendPair, type TestApp } from './test-app.ts';

/**
 * The fuzz model shared by the CI sample (test/fuzz/fuzz.test.ts) and the long campaign (test/fuzz/campaign.ts):
 * the property every answer must satisfy, the app it runs against, and the tally and reports of a run.
 * What a case is, and the known defects it may trigger, are in fuzz-cases.ts; the cases come from the
 * generators (fuzz-generators.ts, fuzz-bodies.ts) and are sent by fuzz-sender.ts.
 */

/** The longest Error message a client should ever have to read. */
export const MESSAGE_MAX_CHARS = 400;

const ERROR_CODES: ReadonlySet<string> = new Set(HTTP_ERROR_CODES);

// ------------------------------------------------------------------ property

/**
 * The property: 2xx, or the Error body repeating the status with a known code; never a 5xx but 503,
 * and 501 for a method HTTP does not know. An answer to HEAD has no body at all.
 */
export function judge(fuzz: FuzzRequest, answer: FuzzAnswer): Verdict {
  const { status } = answer;
  const fail = (problem: string): Verdict => ({ ok: false, status, problem });
  if (fuzz.method === 'HEAD' && answer.body.length > 0) return fail(`a ${status} to HEAD with a body`);
  const unknownMethod = !METHODS.includes(fuzz.method);
  if (status >= 500 && status !== 503 && !(status === 501 && unknownMethod)) return fail(`a ${status}`);
  if (status >= 200 && status < 300) {
    const refusal = mustBeRefused(fuzz);
    if (refusal !== undefined) return fail(`a ${status} for ${refusal}`);
    return { ok: true, status };
  }
  if (fuzz.method === 'HEAD') return { ok: true, status };
  // The documentation UI redirects to its own pages; a redirect names its target and carries no error.
  if (status >= 300 && status < 400 && answer.headers.location !== undefined) return { ok: true, status };
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return fail(answer.body.length === 0 ? `a ${status} without a body` : `a ${status} whose body is not JSON`);
  }
  const shape = errorBodyProblem(body, status);
  if (shape !== undefined) return fail(`a ${status} with ${shape}`);
  const { code } = body as { code: string };
  if (status === 501 && code !== 'method_not_implemented') return fail(`a 501 with ${code}`);
  if (status === 404 && isKnownV1Path(fuzz.path) && !['GET', 'HEAD'].includes(fuzz.method))
    return fail('a 404 for a method other than GET/HEAD on a v1 path (405 expected)');
  return { ok: true, status, code };
}

/** What makes a request one the interface refuses, as far as the generator knows. */
function mustBeRefused(fuzz: FuzzRequest): string | undefined {
  if (!isKnownV1Path(fuzz.path)) return undefined;
  if (Array.isArray(fuzz.headers.authorization)) return 'a request with two Authorization headers';
  if (fuzz.method !== 'POST' || fuzz.body === undefined) return undefined;
  const type = fuzz.headers['content-type'];
  if (typeof type === 'string' && FOREIGN_CHARSETS.includes(type))
    return 'a body declared in a charset other than UTF-8';
  if (fuzz.intent === 'invalid') return 'a body the interface refuses';
  return undefined;
}

function errorBodyProblem(body: unknown, status: number): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'a body that is not an object';
  const record = body as Record<string, unknown>;
  const keys = Object.keys(record).sort().join(',');
  if (keys !== 'code,message,status') return `fields ${keys} instead of code, message, status`;
  if (typeof record.code !== 'string' || !ERROR_CODES.has(record.code)) return 'an unknown code';
  if (record.status !== status) return 'a status field unlike the HTTP status';
  if (typeof record.message !== 'string' || record.message.length === 0) return 'an empty message';
  if (record.message.length > MESSAGE_MAX_CHARS) return `a message over ${MESSAGE_MAX_CHARS} characters`;
  return undefined;
}

/** Paths the router matches to a v1 resource, whatever the id segment says. */
function isKnownV1Path(path: string): boolean {
  return /^\/v1\/pets(\/[^/?#]+)?(\?.*)?$/.test(path);
}

// ------------------------------------------------------------------ tallying

/** Counts of answers per status and per code over a run, and the failures it saw, per class. */
export class FuzzTally {
  readonly statuses = new Map<string, number>();
  readonly codes = new Map<string, number>();
  readonly failures = new Map<string, { count: number; example: FuzzRequest }>();
  cases = 0;

  record(fuzz: FuzzRequest, verdict: Verdict): void {
    this.cases += 1;
    bump(this.statuses, String(verdict.status));
    if (verdict.ok && verdict.code !== undefined) bump(this.codes, verdict.code);
    if (!verdict.ok) {
      const known = this.failures.get(failureClass(verdict));
      if (known) known.count += 1;
      else this.failures.set(failureClass(verdict), { count: 1, example: fuzz });
    }
  }

  summary(): string {
    const lines = [`cases: ${this.cases}`, `per status: ${format(this.statuses)}`, `per code: ${format(this.codes)}`];
    for (const [name, { count }] of this.failures) lines.push(`failure class (${count}): ${name}`);
    return lines.join('\n');
  }
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function format(counts: Map<string, number>): string {
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, count]) => `${key}=${count}`)
    .join(' ');
}

/** A failure's class: what was wrong, without the input's details, so one defect is one class. */
export function failureClass(verdict: Verdict & { ok: false }): string {
  return verdict.problem;
}

/** One case, sent and judged; a transport failure (hang, reset, no answer) is a failed verdict too. */
export async function runCase(baseUrl: string, fuzz: FuzzRequest, timeoutMs: number): Promise<Verdict> {
  try {
    return judge(fuzz, await sendFuzzRequest(baseUrl, fuzz, timeoutMs));
  } catch (error) {
    if (!(error instanceof NoAnswerError))
      return { ok: false, status: 'none', problem: `client error: ${String(error)}` };
    const hang = error.message.includes('within');
    return { ok: false, status: 'none', problem: hang ? 'no answer in time' : 'no answer: the connection closed' };
  }
}

/** A readable, bounded rendering of a request for reports. */
export function describeRequest(fuzz: FuzzRequest): string {
  const clip = (value: string): string => (value.length > 120 ? `${value.slice(0, 120)}…(${value.length})` : value);
  const headers = Object.entries(fuzz.headers)
    .map(([name, value]) => `${name}: ${clip(JSON.stringify(value))}`)
    .join('; ');
  const body = fuzz.body === undefined ? 'none' : clip(JSON.stringify(Buffer.from(fuzz.body).toString('latin1')));
  return `${fuzz.method} ${clip(JSON.stringify(fuzz.path))} | ${headers} | body ${body}`;
}

// ------------------------------------------------------------------- target

export interface FuzzTarget {
  readonly app: TestApp;
  readonly keys: FuzzKeys;
}

/**
 * The app (on SQLite unless `backend` says otherwise) with limits no run reaches, except for the `limited`
 * key (20 a minute): an enterprise key holding every scope and an anonymous limit far above a run's size, so
 * 401s and validation are not masked by 429s or 403s.
 * Forwarded addresses are trusted, so garbage X-Forwarded-For values reach the limiter.
 */
export async function startFuzzTarget(backend?: BackendPair): Promise<FuzzTarget> {
  const env = { ANON_LIMIT_PER_MINUTE: '100000000', TRUST_PROXY: '127.0.0.1' };
  const app = await startTestApp({ env, ...(backend === undefined ? {} : { backend }) });
  // Every scope, keys:manage included, so that the holder's key operations are reached past their scope check.
  const unlimited = await app.newKey({
    plan: 'enterprise',
    perMinute: 100_000_000,
    perDay: 1_000_000_000,
    scopes: KEY_SCOPES,
  });
  const limited = await app.newKey({ plan: 'enterprise', perMinute: 20, perDay: 1_000_000 });
  return { app, keys: { unlimited: unlimited.key, limited: limited.key } };
}

/** The property as fast-check runs it: one request per case; failures of `tolerated` classes only count. */
export function fuzzProperty(
  target: FuzzTarget,
  tally: FuzzTally,
  settings: {
    readonly timeoutMs: number;
    readonly exclude?: ReadonlySet<DefectClass>;
    tolerated?: ReadonlySet<string>;
  },
): fc.IAsyncPropertyWithHooks<[FuzzRequest]> {
  const arbitrary = fuzzRequestArbitrary({ keys: target.keys, exclude: settings.exclude });
  return fc.asyncProperty(arbitrary, async (fuzz) => {
    const verdict = await runCase(target.app.url, fuzz, settings.timeoutMs);
    tally.record(fuzz, verdict);
    if (verdict.ok) return;
    const name = failureClass(verdict);
    if (settings.tolerated?.has(name)) return;
    throw new FuzzFailure(name, fuzz);
  });
}

export class FuzzFailure extends Error {
  readonly failureClass: string;
  constructor(failureClass: string, fuzz: FuzzRequest) {
    super(`${failureClass}\n  request: ${describeRequest(fuzz)}`);
    this.failureClass = failureClass;
  }
}
