import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type {
  OperatorSessionRejection,
  OperatorSessionService,
  OperatorSessionVerdict,
} from '../auth/operator-sessions.ts';
import type { OperatorTokenService, OperatorTokenVerdict } from '../auth/operator-tokens.ts';
import type { Clock } from '../clock.ts';
import { StorageUnavailableError } from '../errors.ts';
import { sendError } from '../http/error-body.ts';
import { limitedNetworkOf, type ClientAddressOf } from '../net/client-address.ts';
import type { RateLimiter, WindowSpec } from '../ratelimit/limiter.ts';
import { secondsUntil } from '../ratelimit/rate-limit-headers.ts';
import type { OperatorTokenRecord } from '../domain/operator-tokens.ts';
import { OUTAGE_TRUST_MS, RememberedVerifications, type CredentialKind } from './remembered-verifications.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator token of a request that needed one; undefined on open paths (/metrics, the console's login). */
    operatorToken: OperatorTokenRecord | undefined;
  }
}

/** The console's cookie, set by POST /admin/v1/session: it holds a session id, never the token. */
export const OPERATOR_COOKIE = 'petstore_operator';
/** Where a browser without a session is sent. */
export const LOGIN_PAGE = '/console/login';
export const OPERATOR_CHALLENGE = 'Bearer realm="petstore-operator"';
/** Failed authentications an address may make per UTC minute; the next request, even a correct one, gets 429. */
export const DEFAULT_FAILURES_PER_MINUTE = 10;

/** The session routes: they take the token in a body (login) or end the session (logout). */
export const SESSION_PATH = '/admin/v1/session';
/** The status of the instance: with the console's overview, what an operator needs most during an outage. */
export const STATUS_PATH = '/admin/v1/status';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface OperatorGateOptions {
  readonly tokens: OperatorTokenService;
  readonly sessions: OperatorSessionService;
  /**
   * Whether storage answered its last readiness probe (undefined before the first): while it did not,
   * a read of the instance's state takes a remembered verification without waiting for storage.
   */
  readonly storageAnswered?: () => boolean | undefined;
  /**
   * The service's rate limiter, under a subject namespace of its own (`operator-auth:<address>`, or
   * an IPv6 client's network). Not a per-process cache: with REDIS_URL the failures are counted once
   * for every instance, so a client guessing tokens gains nothing by spreading its guesses over them;
   * without Redis it is the in-memory limiter, bounded in memory like every other subject.
   */
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly clientAddressOf: ClientAddressOf;
  readonly failuresPerMinute?: number;
  /** The IPv6 networks failures are counted per, as the public limits (IPV6_LIMIT_PREFIX); default 64. */
  readonly ipv6LimitPrefix?: number;
}

/** A verification of an earlier request, taken while storage does not answer. */
interface Recalled {
  readonly ok: true;
  readonly token: OperatorTokenRecord;
  readonly recalled: true;
}

/** Token verification and the per-address limit on failed attempts, for the hook and the login route. */
export class OperatorGate {
  /** What storage last accepted, for reads of the instance's state while it does not answer. */
  private readonly remembered: RememberedVerifications;
  private readonly options: OperatorGateOptions;
  private readonly windows: readonly WindowSpec[];

  constructor(options: OperatorGateOptions) {
    this.remembered = new RememberedVerifications(options.clock);
    this.options = options;
    this.windows = [{ name: 'minute', limit: options.failuresPerMinute ?? DEFAULT_FAILURES_PER_MINUTE, seconds: 60 }];
  }

  /** Seconds to wait when the request's address has used up its failures; undefined when it may try. */
  async refusal(request: FastifyRequest): Promise<number | undefined> {
    const now = this.options.clock.now();
    const state = await this.options.limiter.consume(
      { subject: this.subjectOf(request), windows: this.windows, peek: true },
      now,
    );
    const window = state.windows[0];
    if (window === undefined || window.remaining > 0) return undefined;
    return secondsUntil(window.resetAt, now);
  }

  async recordFailure(request: FastifyRequest): Promise<void> {
    await this.options.limiter.consume(
      { subject: this.subjectOf(request), windows: this.windows },
      this.options.clock.now(),
    );
  }

  /**
   * The token's verdict from storage. `mayRecall`: the request only reads the instance's state, so
   * while storage does not answer it may pass on this token's last verification (see `verified`).
   */
  verify(token: string, mayRecall = false): Promise<OperatorTokenVerdict | Recalled> {
    return this.verified('token', token, mayRecall, () => this.options.tokens.verify(token));
  }

  /** The session's verdict, as `verify`; a use of a valid one is a use of its token. */
  async verifySession(id: string, mayRecall = false): Promise<OperatorSessionVerdict | Recalled> {
    const verdict = await this.verified('session', id, mayRecall, () => this.options.sessions.verify(id));
    if (verdict.ok && !('recalled' in verdict)) this.options.tokens.noteUse(verdict.token.id);
    return verdict;
  }

  /**
   * Storage decides whenever it answers, and its verdict is remembered (a pass) or forgotten (a
   * refusal). While it does not answer (its last probe failed, or this lookup timed out), a request
   * that `mayRecall` passes on a verification storage made within OUTAGE_TRUST_MS; any other gets
   * the StorageUnavailableError, never a pass: a change would fail without storage anyway, and a
   * credential storage never accepted here proves nothing.
   */
  private async verified<V extends OperatorTokenVerdict | OperatorSessionVerdict>(
    kind: CredentialKind,
    credential: string,
    mayRecall: boolean,
    lookUp: () => Promise<V>,
  ): Promise<V | Recalled> {
    const recall = (): Recalled | undefined => {
      const token = mayRecall ? this.remembered.recall(kind, credential) : undefined;
      return token === undefined ? undefined : { ok: true, token, recalled: true };
    };
    // Known to be down: no wait of STORAGE_TIMEOUT_MS for a lookup that would time out.
    const early = this.options.storageAnswered?.() === false ? recall() : undefined;
    if (early !== undefined) return early;
    let verdict: V;
    try {
      verdict = await lookUp();
    } catch (error) {
      if (!(error instanceof StorageUnavailableError)) throw error;
      const recalled = recall();
      if (recalled !== undefined) return recalled;
      throw new StorageUnavailableError(unverifiable(kind, mayRecall), { cause: error });
    }
    if (verdict.ok) this.remembered.remember(kind, credential, verdict.token);
    else this.remembered.forget(kind, credential);
    return verdict;
  }

  /** A new console session of the token; its id, for the cookie. */
  startSession(token: OperatorTokenRecord): Promise<string> {
    return this.options.sessions.start(token);
  }

  /** Ends the session, if the id names an open one; this instance forgets its verification at once. */
  endSession(id: string): Promise<boolean> {
    this.remembered.forget('session', id);
    return this.options.sessions.end(id);
  }

  /** An IPv6 client is counted by its network: it may send each guess from another address of its /64. */
  private subjectOf(request: FastifyRequest): string {
    const address = this.options.clientAddressOf(request.socket.remoteAddress, request.headers['x-forwarded-for']);
    return `operator-auth:${limitedNetworkOf(address, this.options.ipv6LimitPrefix ?? 64)}`;
  }
}

function unverifiable(kind: CredentialKind, mayRecall: boolean): string {
  const what = kind === 'token' ? 'the operator token' : 'the console session';
  const minutes = OUTAGE_TRUST_MS / 60_000;
  const unless = mayRecall ? `, and this instance has not verified it in the last ${minutes} minutes` : '';
  return `storage does not answer, so ${what} cannot be checked${unless}; retry once storage answers`;
}

/**
 * Whether the request only reads the instance's state: the status, the console's overview page and
 * the console's files it loads (the same for every operator). Such a request may pass on a
 * remembered verification while storage does not answer; nothing that changes anything may.
 */
function readsStateOnly(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const route = request.routeOptions.url;
  if (route === undefined) return false;
  return route === STATUS_PATH || route === '/console' || route.startsWith('/console/assets/');
}

/**
 * Whether a path no route serves lies in the areas behind a token: the admin API and the console,
 * but the console's login page and what is under it (`/console/login…`). Also which requests the
 * `operator request` log line is written for.
 */
export function isGuardedPath(path: string): boolean {
  if (path === '/admin' || path.startsWith('/admin/')) return true;
  if (path === '/console' || path.startsWith('/console/')) return !path.startsWith('/console/login');
  return false;
}

/**
 * A route needs a token unless its config says it is public (/metrics, the console's login page and
 * its assets, logging in and out). A path no route serves is judged by its decoded form (the router
 * decodes before matching, so `/%61dmin/…` is `/admin/…`): under /admin or /console it needs a token
 * too, so that nothing there shows even whether it exists.
 */
function needsToken(request: FastifyRequest): boolean {
  if (request.routeOptions.url !== undefined) return request.routeOptions.config.public !== true;
  return isGuardedPath(decodedPath(request.url));
}

function decodedPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * A page of the console, as a browser opens it: anything under /console but its files and the login
 * page. Pages no route serves are included, so that a browser is sent to log in whether or not the
 * page exists.
 */
function isConsolePage(path: string): boolean {
  if (path === '/console') return true;
  return path.startsWith('/console/') && !path.startsWith('/console/assets/') && !path.startsWith(LOGIN_PAGE);
}

/** Whether the Accept header names `text/html` itself (not only through a wildcard), with a weight above 0. */
function acceptsHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((range) => {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    return type === 'text/html' && !parameters.some((parameter) => /^q=0(?:\.0{0,3})?$/.test(parameter));
  });
}

/**
 * Where the login page sends the browser once logged in: the page asked for, when it is a page of
 * the console (never another site: the login page checks it again before following it).
 */
function loginLocation(request: FastifyRequest): string {
  const asked = request.url;
  if (asked === '/console' || !/^\/console(?:[/?]|$)/.test(asked) || asked.length > 1024) return LOGIN_PAGE;
  return `${LOGIN_PAGE}?next=${encodeURIComponent(asked)}`;
}

/** A browser opening a console page without a valid session: sent to the login page, not shown an Error body. */
function isBrowserOpeningPage(request: FastifyRequest): boolean {
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    isConsolePage(decodedPath(request.url)) &&
    acceptsHtml(request.headers.accept)
  );
}

function refuse(request: FastifyRequest, reply: FastifyReply, message: string): void {
  if (isBrowserOpeningPage(request)) {
    reply.code(303).header('location', loginLocation(request)).send();
    return;
  }
  sendOperatorUnauthorized(reply, message);
}

type Credentials =
  | { readonly kind: 'none' }
  | { readonly kind: 'unusable' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'session'; readonly id: string };

/** The token of `Authorization: Bearer …`, else the session of the console cookie. */
function credentialsOf(request: FastifyRequest): Credentials {
  // Node keeps only the first of repeated Authorization headers in `headers`; the raw list has them all.
  let headers = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if ((raw[i] as string).toLowerCase() === 'authorization') headers += 1;
  if (headers > 1) return { kind: 'unusable' };
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    return match ? { kind: 'token', token: match[1] as string } : { kind: 'unusable' };
  }
  const cookie = cookieValue(request.headers.cookie, OPERATOR_COOKIE);
  return cookie === undefined || cookie === '' ? { kind: 'none' } : { kind: 'session', id: cookie };
}

/** The first value of the cookie `name` in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals < 0 || pair.slice(0, equals).trim() !== name) continue;
    return pair
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

/**
 * Whether the request comes from a page of this listener: its Origin is the listener's own origin,
 * scheme included: the scheme the request came over (plain HTTP on this listener, which terminates
 * no TLS) and the host it was sent to. A proxy in front of the listener must pass the Host header on
 * unchanged.
 */
export function isSameOrigin(request: FastifyRequest): boolean {
  const { origin, host } = request.headers;
  if (origin === undefined || host === undefined) return false;
  try {
    const own = new URL(`${request.protocol}://${host}`).origin;
    // Exactly as browsers write it: scheme, host and a port other than the scheme's default.
    return origin === own;
  } catch {
    return false;
  }
}

/** The Secure attribute for a cookie set over HTTPS; none over plain HTTP, where a browser would drop the cookie. */
export function secureAttribute(request: FastifyRequest): string {
  return request.protocol === 'https' ? '; Secure' : '';
}

export function sendOperatorUnauthorized(reply: FastifyReply, message: string): FastifyReply {
  reply.header('www-authenticate', OPERATOR_CHALLENGE);
  return sendError(reply, 'unauthorized', message);
}

export function sendTooManyFailures(reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  reply.header('retry-after', String(retryAfterSeconds));
  return sendError(
    reply,
    'rate_limited',
    `too many failed operator authentications from this address; retry after ${retryAfterSeconds} s`,
  );
}

export const MISSING_TOKEN =
  'an operator token is required: send Authorization: Bearer <operator token>, or log in to the console';
export const INVALID_TOKEN = 'the operator token is not valid';
const INVALID_SESSION = 'the console session has ended or is not valid; log in again';

/**
 * Session cookies that count as failed authentications: well-formed ids no stored session has, each
 * of which cost a lookup. A session that ended (logout, idle or absolute time, revocation) was a
 * valid login: a browser still holding its cookie, in several tabs perhaps, must not use up its
 * address's allowance and lock its operator out of logging in again; nor must a cookie of an earlier
 * release, which held the token and is refused by its shape alone.
 */
const GUESSED_SESSION: ReadonlySet<OperatorSessionRejection> = new Set(['unknown']);

/**
 * Every request to the admin API and the console (but the login page and the session routes) needs
 * a valid operator token in `Authorization: Bearer`, or a valid session in the console cookie;
 * without one it gets 401 and nothing else, before routing shows anything, and a browser opening a
 * console page is sent to the login page instead (303). An address whose failures used up its
 * allowance gets 429 until the minute ends, whatever it sends. A state-changing request
 * authenticated by the cookie must come from this listener's own origin (CSRF).
 */
export const operatorAuthentication = fastifyPlugin<{ gate: OperatorGate }>(
  async (app: FastifyInstance, { gate }: { gate: OperatorGate }) => {
    app.decorateRequest('operatorToken', undefined);
    app.addHook('onRequest', (request, reply, done) => {
      authenticate(gate, request, reply).then(
        () => done(),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    });
  },
  { name: 'operator-authentication' },
);

async function authenticate(gate: OperatorGate, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!needsToken(request)) return;
  const retryAfter = await gate.refusal(request);
  if (retryAfter !== undefined) {
    sendTooManyFailures(reply, retryAfter);
    return;
  }
  const credentials = credentialsOf(request);
  if (credentials.kind === 'none') {
    refuse(request, reply, MISSING_TOKEN);
    return;
  }
  if (credentials.kind === 'session') {
    const verdict = await gate.verifySession(credentials.id, readsStateOnly(request));
    if ('recalled' in verdict) logRecalled(request);
    if (!verdict.ok) {
      if (GUESSED_SESSION.has(verdict.reason)) await gate.recordFailure(request);
      request.log.info({ reason: verdict.reason }, 'operator session refused');
      refuse(request, reply, INVALID_SESSION);
      return;
    }
    if (STATE_CHANGING.has(request.method) && !isSameOrigin(request)) {
      sendError(
        reply,
        'forbidden',
        `a ${request.method} authenticated by the console cookie must come from the console's own origin`,
      );
      return;
    }
    request.operatorToken = verdict.token;
    return;
  }
  const verdict =
    credentials.kind === 'token'
      ? await gate.verify(credentials.token, readsStateOnly(request))
      : ({ ok: false, reason: 'malformed' } as const);
  if ('recalled' in verdict) logRecalled(request);
  if (!verdict.ok) {
    await gate.recordFailure(request);
    request.log.info({ reason: verdict.reason }, 'operator token refused');
    refuse(request, reply, INVALID_TOKEN);
    return;
  }
  request.operatorToken = verdict.token;
}

function logRecalled(request: FastifyRequest): void {
  request.log.info(
    { trustedForMs: OUTAGE_TRUST_MS },
    'storage does not answer: the operator passed on a verification remembered from an earlier request',
  );
}
