import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkLimitWindows, LIMIT_WINDOWS, type LimitWindows } from '../../src/domain/limit-windows.ts';
import { runCliInProcess, type CliResult } from '../support/cli-runner.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { errorOf, request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startOperatorTestApp, type OperatorTestApp } from '../operator/operator-app.ts';
import { assertRefused, DAY_LEFT_SECONDS, MID, MID_SECONDS, rateLimitOf } from './rate-limit-assertions.ts';

/**
 * The limit windows are one table (src/domain/limit-windows.ts). A service built on a table with one
 * more window, per hour, given where the composition root takes the table and with nothing else
 * changed, counts requests in it and shows it wherever the windows show: the rate-limit headers,
 * GET /v1/usage, the admin API and its document, and the CLI (its help, its flags, its output).
 *
 * Storage keeps an enterprise account's own limits in a column per window, and a new window's column
 * comes with a migration (docs/architecture.md, "A new limit window"); this table has none for the
 * hour, so the accounts here are on plans, whose limits the table sets.
 */

const PER_HOUR = {
  field: 'perHour',
  name: 'hour',
  seconds: 3_600,
  flag: 'per-hour',
  plans: { free: 3, pro: 200, business: 5_000 },
} as const;

const [PER_MINUTE, PER_DAY] = LIMIT_WINDOWS;
const WITH_HOURS: LimitWindows = [PER_MINUTE, PER_HOUR, PER_DAY];

/** MID is 12:00:30 UTC: the hour window ends at 13:00. */
const NEXT_HOUR_SECONDS = Date.UTC(2026, 5, 1, 13) / 1000;
const HOUR_LEFT_SECONDS = NEXT_HOUR_SECONDS - MID_SECONDS;

describeEachBackend('a limit window added to the table', (backend) => {
  let app: OperatorTestApp;

  before(async () => {
    app = await startOperatorTestApp({ backend, clock: new ManualClock(MID), limitWindows: WITH_HOURS });
  });
  after(() => app.close());

  const admin = (path: string, options: HttpRequest = {}): Promise<HttpAnswer> =>
    request(app.operator, path, {
      ...options,
      headers: { authorization: `Bearer ${app.token}`, origin: app.listener.url, ...options.headers },
    });

  it('counts requests in it, and the rate-limit headers name it between the minute and the day', async () => {
    const { key } = await app.publicApp.newKey({ plan: 'free' });
    const first = await request(app.publicApp, '/v1/pets', { key });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(rateLimitOf(first), {
      // The hour has the fewest requests left: the X-RateLimit fields describe it.
      limit: 3,
      remaining: 2,
      reset: NEXT_HOUR_SECONDS,
      policy: '"minute";q=60;w=60, "hour";q=3;w=3600, "day";q=1000;w=86400',
      state: `"minute";r=59;t=30, "hour";r=2;t=${HOUR_LEFT_SECONDS}, "day";r=999;t=${DAY_LEFT_SECONDS}`,
    });
    for (let sent = 1; sent < 3; sent += 1)
      assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    const refused = await request(app.publicApp, '/v1/pets', { key });
    assertRefused(refused, 'rate_limited');
    assert.equal(rateLimitOf(refused).reset, NEXT_HOUR_SECONDS);
  });

  it('shows it in GET /v1/usage, and in the document that describes the answer', async () => {
    const { key } = await app.publicApp.newKey({ plan: 'pro' });
    const answer = await request(app.publicApp, '/v1/usage', { key });
    assert.equal(answer.status, 200, answer.text);
    const { windows } = answer.json<{ windows: Record<string, unknown> }>();
    assert.deepEqual(windows, {
      minute: { limit: 300, remaining: 300, reset: MID_SECONDS + 30 },
      hour: { limit: 200, remaining: 200, reset: NEXT_HOUR_SECONDS },
      day: { limit: 10_000, remaining: 10_000, reset: MID_SECONDS + DAY_LEFT_SECONDS },
    });
    assert.deepEqual(Object.keys(windows), ['minute', 'hour', 'day']);
    const document = (await request(app.publicApp, '/v1/openapi.json')).json<OpenApi>();
    assert.deepEqual(Object.keys(propertiesOf(document, 'Usage', 'windows')), ['minute', 'hour', 'day']);
  });

  it("shows it among an account's limits in the admin API, whose plan fields take it", async () => {
    const name = `hourly-${process.pid}-${Date.now()}`;
    const created = await admin('/admin/v1/accounts', { method: 'POST', json: { name, plan: 'pro' } });
    assert.equal(created.status, 201, created.text);
    const limits = { perMinute: 300, perHour: 200, perDay: 10_000 };
    assert.deepEqual(created.json<{ limits: unknown }>().limits, limits);
    const read = await admin(`/admin/v1/accounts/${name}`);
    assert.deepEqual(read.json<{ limits: unknown }>().limits, limits);

    const refused = await admin(`/admin/v1/accounts/${name}/plan`, {
      method: 'PUT',
      json: { plan: 'business', perHour: 10 },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(errorOf(refused).message, 'perMinute, perHour and perDay apply only to the enterprise plan');

    const document = (await admin('/admin/v1/openapi.json')).json<OpenApi>();
    for (const schema of ['Account', 'AccountDetail'])
      assert.deepEqual(Object.keys(propertiesOf(document, schema, 'limits')), ['perMinute', 'perHour', 'perDay']);
  });

  it("shows it in the CLI's help, flags and output", async () => {
    const help = await cli(['help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /account create --name NAME --plan PLAN \[--per-minute N --per-hour N --per-day N\]/);
    assert.match(help.stdout, /create an account; enterprise needs --per-minute, --per-hour and --per-day/);
    assert.match(help.stdout, /\(enterprise needs --per-minute, --per-hour and --per-day\)/);

    const env = { DATABASE_URL: app.publicApp.services.config.databaseUrl, LOG_LEVEL: 'silent' };
    const name = `cli-hourly-${process.pid}-${Date.now()}`;
    const refused = await cli(['account', 'create', '--name', name, '--plan', 'free', '--per-hour', '5'], env);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--per-minute, --per-hour and --per-day apply only to the enterprise plan/);

    const created = await cli(['account', 'create', '--name', name, '--plan', 'free'], env);
    assert.equal(created.status, 0, created.stderr);
    assert.match(created.stdout, /^NAME +PLAN +PER-MINUTE +PER-HOUR +PER-DAY +CREATED$/m);
    const shown = await cli(['account', 'show', '--name', name, '--json'], env);
    assert.equal(shown.status, 0, shown.stderr);
    const account = JSON.parse(shown.stdout) as Record<string, unknown>;
    assert.deepEqual([account.perMinute, account.perHour, account.perDay], [60, 3, 1_000]);
  });
});

describe('the table the service runs on', () => {
  it('must hold every window of LIMIT_WINDOWS, as it defines them', () => {
    assert.throws(() => checkLimitWindows([PER_MINUTE, PER_HOUR]), /must hold perDay/);
    assert.throws(() => checkLimitWindows([PER_MINUTE, { ...PER_DAY, seconds: 3_600 }]), /must hold perDay/);
  });

  it('names each window once, by field, name and flag, with positive integers', () => {
    assert.throws(() => checkLimitWindows([...LIMIT_WINDOWS, { ...PER_HOUR, name: 'day' }]), /share a name/);
    assert.throws(() => checkLimitWindows([...LIMIT_WINDOWS, { ...PER_HOUR, flag: 'per-day' }]), /share a flag/);
    const free = { ...PER_HOUR.plans, free: 0 };
    assert.throws(() => checkLimitWindows([...LIMIT_WINDOWS, { ...PER_HOUR, plans: free }]), /positive integers/);
    assert.deepEqual(checkLimitWindows(WITH_HOURS), WITH_HOURS);
  });
});

interface OpenApi {
  readonly components: { readonly schemas: Record<string, Schema> };
}

interface Schema {
  readonly properties?: Record<string, Schema>;
}

function propertiesOf(document: OpenApi, component: string, property: string): Record<string, Schema> {
  return document.components.schemas[component]?.properties?.[property]?.properties ?? {};
}

/** The CLI in this process, with the hourly window the tests add. */
function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCliInProcess(args, env, WITH_HOURS);
}
