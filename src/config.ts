import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import {
  IPV6_LIMIT_PREFIX_RANGE,
  parseTrustedProxies,
  TrustedProxiesError,
  type TrustedProxies,
} from './net/client-address.ts';
import { HostNameError, parseHostNames } from './net/host-names.ts';

/**
 * Every setting the service reads from the environment, in one place. `loadConfig` validates and
 * freezes it; a bad value stops start-up with a one-line error naming the variable.
 */
const Bool = Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')]);

export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'TCP port to listen on.' }),
  HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'Address to bind; 0.0.0.0 behind a load balancer.',
  }),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    default: 'sqlite:./data/petstore.db',
    description: 'sqlite:PATH for the embedded store, postgres://… for PostgreSQL.',
  }),
  REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^rediss?://.+$',
      description:
        'Shares rate-limit counters and bans between instances; with REDIS_CLUSTER, the comma-separated seed nodes.',
    }),
  ),
  REDIS_CLUSTER: Bool,
  REDIS_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9:_.-]{1,64}$',
    default: 'petstore:',
    description: 'Prefix of every Redis key, to share one Redis between deployments.',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info', description: 'pino log level.' },
  ),
  PUBLIC_BASE_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^/]+(/.*)?$',
      description: 'Absolute origin used in Link headers; relative links when unset.',
    }),
  ),
  DEPRECATION_DATE: Type.String({
    default: '2025-12-05T00:00:00Z',
    description: 'When GET /v1/pets/{petId} was deprecated (Deprecation header).',
  }),
  KEY_CACHE_TTL_MS: Type.Integer({
    minimum: 0,
    maximum: 1000,
    default: 1000,
    description: 'How long a verified key is trusted before storage is asked again.',
  }),
  REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    default: 10000,
    description: 'Time a client has to send its headers and whole body; then 408.',
  }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    default: 10000,
    description: 'Grace period for in-flight requests on SIGTERM.',
  }),
  CORS_ORIGINS: Type.String({ default: '', description: 'Comma-separated allowed origins; empty disables CORS.' }),
  CORS_MAX_AGE_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 86_400,
    default: 600,
    description: 'How long a browser may keep a preflight answer (Access-Control-Max-Age); 0: ask every time.',
  }),
  TRUST_PROXY: Type.String({
    default: '',
    description: 'Trusted proxies: addresses or CIDR ranges, comma-separated, or a number of hops; unset: none.',
  }),
  METRICS_PORT: Type.String({
    pattern: '^(off|[0-9]{1,5})$',
    default: '9464',
    description: 'Port of the operator listener: /metrics, the admin API, the console (0: any free port; off: none).',
  }),
  METRICS_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'Address the operator listener binds; never the public listener.',
  }),
  OPERATOR_HOSTS: Type.String({
    default: '',
    description: 'Host names the operator listener answers besides METRICS_HOST and loopback names, comma-separated.',
  }),
  OPERATOR_SESSION_IDLE_MINUTES: Type.Integer({
    minimum: 1,
    maximum: 1440,
    default: 30,
    description: 'A console session ends after this long without a request.',
  }),
  OPERATOR_SESSION_MAX_HOURS: Type.Integer({
    minimum: 1,
    maximum: 720,
    default: 12,
    description: 'A console session ends this long after its login, however busy.',
  }),
  ANON_LIMIT_PER_MINUTE: Type.Integer({
    minimum: 1,
    default: 60,
    description: 'Requests per minute per client address without a valid key.',
  }),
  IPV6_LIMIT_PREFIX: Type.Integer({
    minimum: IPV6_LIMIT_PREFIX_RANGE.min,
    maximum: IPV6_LIMIT_PREFIX_RANGE.max,
    default: 64,
    description:
      'Prefix length of the IPv6 networks that per-address limits and the operator lockout count as one client.',
  }),
  USAGE_PER_MINUTE: Type.Integer({
    minimum: 1,
    default: 30,
    description: 'Requests per minute per account to GET /v1/usage, counted apart from the plan.',
  }),
  BAN_THRESHOLD: Type.Integer({
    minimum: 1,
    default: 10,
    description: 'Requests after a 429, before Retry-After, that trigger a ban.',
  }),
  BAN_BASE_SECONDS: Type.Integer({
    minimum: 1,
    default: 900,
    description: 'First ban length; doubles per repeat within 24 h.',
  }),
  BAN_MAX_SECONDS: Type.Integer({ minimum: 1, default: 86400, description: 'Longest ban.' }),
  PG_POOL_SIZE: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 10,
    description: 'PostgreSQL connections per instance.',
  }),
  STORAGE_TIMEOUT_MS: Type.Integer({ minimum: 50, default: 2000, description: 'Longest wait for storage before 503.' }),
  USAGE_FLUSH_MS: Type.Integer({
    minimum: 50,
    maximum: 600_000,
    default: 10_000,
    description:
      'How often each instance adds its request counts to the usage history; at most this much is lost on a crash.',
  }),
  USAGE_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 90,
    description: 'Days of usage history kept; older hours are purged.',
  }),
  DEMO_BOOTSTRAP: Bool,
});

const defaults = { DEMO_BOOTSTRAP: 'true', REDIS_CLUSTER: 'false' } as const;

type Env = Static<typeof EnvSchema>;

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly redisUrl: string | undefined;
  /** REDIS_URL lists the seed nodes of a Redis Cluster (one or more URLs, comma-separated). */
  readonly redisCluster: boolean;
  readonly redisPrefix: string;
  readonly logLevel: string;
  readonly publicBaseUrl: string;
  readonly deprecationDate: Date;
  readonly keyCacheTtlMs: number;
  readonly requestTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly corsOrigins: readonly string[];
  /** Access-Control-Max-Age of preflight answers, in seconds. */
  readonly corsMaxAgeSeconds: number;
  readonly trustProxy: TrustedProxies;
  /** The operator listener (/metrics, /admin/v1, /console); undefined when METRICS_PORT=off. */
  readonly metrics: { readonly port: number; readonly host: string } | undefined;
  /** Host names the operator listener answers besides METRICS_HOST and loopback ones, canonical (OPERATOR_HOSTS). */
  readonly operatorHosts: readonly string[];
  /** When console sessions end: after `idleMs` without a request, `maxMs` after login. */
  readonly operatorSession: { readonly idleMs: number; readonly maxMs: number };
  readonly anonLimitPerMinute: number;
  /** IPv6 clients are limited per network of this many bits (an IPv4 client per address). */
  readonly ipv6LimitPrefix: number;
  readonly usagePerMinute: number;
  readonly ban: { readonly threshold: number; readonly baseSeconds: number; readonly maxSeconds: number };
  readonly pgPoolSize: number;
  readonly storageTimeoutMs: number;
  readonly demoBootstrap: boolean;
  readonly usage: { readonly flushMs: number; readonly retentionDays: number };
}

export class ConfigError extends Error {}

/** Sunset of GET /v1/pets/{petId}, fixed by the interface (part 9). */
export const GET_PET_SUNSET = new Date('2030-12-05T00:00:00Z');

export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  const known = Object.keys(EnvSchema.properties);
  const raw: Record<string, string> = { ...defaults };
  for (const name of known) {
    const value = environment[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  // As given: Default and Convert change `raw` in place, and the error names the text that was set.
  const given = { ...raw };
  // Convert would read 1.5 as 1 and 0x10 as 16, and start with a value nobody wrote.
  const notWhole = known.find((name) => isInteger(name) && !/^-?\d+$/.test(raw[name]?.trim() ?? '0'));
  if (notWhole !== undefined) {
    const got = JSON.stringify(given[notWhole]);
    throw new ConfigError(`invalid configuration: ${notWhole} must be a whole number in decimal digits (got ${got})`);
  }
  const converted = Value.Convert(EnvSchema, Value.Default(EnvSchema, raw));
  const firstError = Value.Errors(EnvSchema, converted)[0];
  if (firstError) {
    const name = firstError.instancePath.replace(/^\//, '');
    const property = EnvSchema.properties[name as keyof Env];
    const choices =
      'anyOf' in property ? property.anyOf.map((choice: { const?: unknown }) => choice.const).join(', ') : '';
    const problem = choices ? `must be one of ${choices}` : firstError.message;
    throw new ConfigError(`invalid configuration: ${name} ${problem} (got ${JSON.stringify(given[name])})`);
  }
  return freeze(converted as Env);
}

function isInteger(name: string): boolean {
  const property = EnvSchema.properties[name as keyof Env];
  return 'type' in property && property.type === 'integer';
}

function freeze(env: Env): Config {
  const deprecationDate = new Date(env.DEPRECATION_DATE);
  if (Number.isNaN(deprecationDate.getTime())) {
    throw new ConfigError(
      `invalid configuration: DEPRECATION_DATE is not a date (got ${JSON.stringify(env.DEPRECATION_DATE)})`,
    );
  }
  if (deprecationDate > GET_PET_SUNSET) {
    throw new ConfigError('invalid configuration: DEPRECATION_DATE must not be later than the sunset, 2030-12-05');
  }
  if (env.BAN_MAX_SECONDS < env.BAN_BASE_SECONDS) {
    throw new ConfigError('invalid configuration: BAN_MAX_SECONDS must be at least BAN_BASE_SECONDS');
  }
  const redisCluster = env.REDIS_CLUSTER === 'true' || env.REDIS_CLUSTER === '1';
  checkRedisUrl(env.REDIS_URL, redisCluster);
  return Object.freeze({
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    redisCluster,
    redisPrefix: env.REDIS_PREFIX,
    logLevel: env.LOG_LEVEL,
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? '').replace(/\/+$/, ''),
    deprecationDate,
    keyCacheTtlMs: env.KEY_CACHE_TTL_MS,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    corsOrigins: Object.freeze(
      env.CORS_ORIGINS.split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
    ),
    corsMaxAgeSeconds: env.CORS_MAX_AGE_SECONDS,
    trustProxy: trustedProxies(env.TRUST_PROXY),
    metrics: metricsListener(env),
    operatorHosts: operatorHosts(env.OPERATOR_HOSTS),
    operatorSession: operatorSession(env),
    anonLimitPerMinute: env.ANON_LIMIT_PER_MINUTE,
    ipv6LimitPrefix: env.IPV6_LIMIT_PREFIX,
    usagePerMinute: env.USAGE_PER_MINUTE,
    ban: Object.freeze({
      threshold: env.BAN_THRESHOLD,
      baseSeconds: env.BAN_BASE_SECONDS,
      maxSeconds: env.BAN_MAX_SECONDS,
    }),
    pgPoolSize: env.PG_POOL_SIZE,
    storageTimeoutMs: env.STORAGE_TIMEOUT_MS,
    demoBootstrap: env.DEMO_BOOTSTRAP === 'true' || env.DEMO_BOOTSTRAP === '1',
    usage: Object.freeze({ flushMs: env.USAGE_FLUSH_MS, retentionDays: env.USAGE_RETENTION_DAYS }),
  });
}

/** One Redis URL, or with REDIS_CLUSTER a list of them; a list without it is a cluster set up by mistake. */
function checkRedisUrl(url: string | undefined, cluster: boolean): void {
  if (url === undefined) {
    if (cluster) throw new ConfigError('invalid configuration: REDIS_CLUSTER is set but REDIS_URL is not');
    return;
  }
  const urls = url.split(',').map((part) => part.trim());
  if (!cluster && urls.length > 1)
    throw new ConfigError(
      `invalid configuration: REDIS_URL lists ${urls.length} servers; ` +
        'set REDIS_CLUSTER=true if they are seed nodes of a Redis Cluster',
    );
  const wrong = urls.find((part) => !/^rediss?:\/\/[^\s,]+$/.test(part));
  if (wrong !== undefined)
    throw new ConfigError(
      'invalid configuration: REDIS_URL must be redis:// or rediss:// URLs separated by commas ' +
        `(got ${JSON.stringify(wrong)})`,
    );
}

function trustedProxies(value: string): TrustedProxies {
  try {
    return parseTrustedProxies(value);
  } catch (error) {
    if (!(error instanceof TrustedProxiesError)) throw error;
    // The value is named once: whole, or the entry at fault and the list it is in.
    const part = error.entry;
    const got =
      part === undefined || part === value.trim()
        ? `got ${JSON.stringify(value)}`
        : `got ${JSON.stringify(part)} in ${JSON.stringify(value)}`;
    throw new ConfigError(`invalid configuration: TRUST_PROXY ${error.message} (${got})`);
  }
}

/** Where metrics are served: apart from the public port, which must never carry them. */
function metricsListener(env: Env): Config['metrics'] {
  if (env.METRICS_PORT === 'off') return undefined;
  const port = Number(env.METRICS_PORT);
  if (port > 65535)
    throw new ConfigError(`invalid configuration: METRICS_PORT must be 0-65535 or off (got "${env.METRICS_PORT}")`);
  const wildcard = (host: string): boolean => host === '0.0.0.0' || host === '::';
  const sameHost = env.METRICS_HOST === env.HOST || wildcard(env.METRICS_HOST) || wildcard(env.HOST);
  if (port !== 0 && port === env.PORT && sameHost)
    throw new ConfigError(`invalid configuration: METRICS_PORT must differ from PORT (both ${port})`);
  return Object.freeze({ port, host: env.METRICS_HOST });
}

function operatorHosts(value: string): readonly string[] {
  try {
    return Object.freeze(parseHostNames(value));
  } catch (error) {
    if (!(error instanceof HostNameError)) throw error;
    const got =
      error.entry === value.trim()
        ? `got ${JSON.stringify(value)}`
        : `got ${JSON.stringify(error.entry)} in ${JSON.stringify(value)}`;
    throw new ConfigError(`invalid configuration: OPERATOR_HOSTS ${error.message} (${got})`);
  }
}

function operatorSession(env: Env): Config['operatorSession'] {
  const idleMs = env.OPERATOR_SESSION_IDLE_MINUTES * 60_000;
  const maxMs = env.OPERATOR_SESSION_MAX_HOURS * 3_600_000;
  if (idleMs > maxMs)
    throw new ConfigError(
      'invalid configuration: OPERATOR_SESSION_IDLE_MINUTES must not exceed OPERATOR_SESSION_MAX_HOURS',
    );
  return Object.freeze({ idleMs, maxMs });
}
