import assert from 'node:assert/strict';

/**
 * Raw HTTP requests to any path of a running app, documented or not (404s, 405s, preflights,
 * /metrics). Documented operations whose responses should also be checked against the OpenAPI
 * document go through `api()` of openapi-contract.ts instead.
 */

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** The body as text ('' when there is none). */
  readonly text: string;
  /** The body parsed as JSON; fails the test when it is not JSON. */
  json<T>(): T;
}

export interface HttpRequest {
  readonly method?: string;
  /** The API key, sent as `Authorization: Bearer <key>`; leave it out to send no key. */
  readonly key?: string;
  /** Extra headers; they override the Authorization header derived from `key`. */
  readonly headers?: Record<string, string>;
  /** Sent as is; a string is not JSON-encoded and gets no Content-Type unless `headers` says so. */
  readonly body?: string | Uint8Array;
}

export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly status: number;
}

/** Sends one request to `${app.url}${path}` and reads the whole answer. */
export async function request(
  app: { readonly url: string },
  path: string,
  options: HttpRequest = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  Object.assign(headers, options.headers);
  const init: RequestInit = { method: options.method ?? 'GET', headers };
  if (options.body !== undefined) init.body = options.body;
  const response = await fetch(`${app.url}${path}`, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json<T>(): T {
      try {
        return JSON.parse(text) as T;
      } catch (error) {
        assert.fail(`a ${response.status} body that is not JSON (${String(error)}): ${text.slice(0, 300)}`);
      }
    },
  };
}

/** `count` requests one after the other; every answer in order. */
export async function requestInSequence(
  app: { readonly url: string },
  path: string,
  options: HttpRequest,
  count: number,
): Promise<HttpAnswer[]> {
  const answers: HttpAnswer[] = [];
  for (let i = 0; i < count; i += 1) answers.push(await request(app, path, options));
  return answers;
}

/** `count` requests all sent at once; every answer in the order sent. */
export function requestConcurrently(
  app: { readonly url: string },
  path: string,
  options: HttpRequest,
  count: number,
): Promise<HttpAnswer[]> {
  return Promise.all(Array.from({ length: count }, () => request(app, path, options)));
}

export function statusesOf(answers: readonly HttpAnswer[]): number[] {
  return answers.map((answer) => answer.status);
}

/** The Error body of a non-2xx answer: exactly {code, message, status}, status equal to the HTTP status. */
export function errorOf(answer: HttpAnswer): ErrorBody {
  const body: unknown = answer.json();
  assert.ok(typeof body === 'object' && body !== null && !Array.isArray(body), `an Error object, got ${answer.text}`);
  const record = body as Record<string, unknown>;
  assert.deepEqual(Object.keys(record).sort(), ['code', 'message', 'status'], `Error fields, got ${answer.text}`);
  assert.equal(typeof record.code, 'string');
  assert.equal(typeof record.message, 'string');
  assert.ok(String(record.message).length > 0, 'the message is not empty');
  assert.equal(record.status, answer.status, 'the body repeats the HTTP status');
  return { code: String(record.code), message: String(record.message), status: Number(record.status) };
}
