import assert from 'node:assert/strict';
import { assertDocumentedAnswer, type HttpTarget } from './openapi-contract.ts';

export type { HttpTarget } from './openapi-contract.ts';

/**
 * The one way tests call the app over HTTP. `request()` sends a request to any path, documented or
 * not (404s, 405s, preflights, /healthz, /docs), and whenever the method and path are an operation
 * of the OpenAPI document the app serves, it checks the answer against it (openapi-contract.ts):
 * every documented answer a test sees is also a contract check.
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
  /** Extra headers; they override the Authorization header derived from `key` and the JSON Content-Type. */
  readonly headers?: Record<string, string>;
  /**
   * A JSON body, sent with Content-Type application/json: a string is JSON text, sent as is (so a
   * test can send malformed JSON); anything else is JSON-encoded.
   */
  readonly json?: unknown;
  /**
   * A body sent as is when `json` is not given: a string gets fetch's text/plain unless `headers`
   * say otherwise, bytes get no Content-Type, a stream is sent chunked.
   */
  readonly body?: string | Uint8Array | ReadableStream<Uint8Array>;
}

export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly status: number;
}

/** A Pet as the API returns it (categoryId as parsed by JSON.parse: compare raw text for exact digits). */
export interface Pet {
  readonly id: number;
  readonly name: string;
  readonly categoryId: number;
  readonly status?: 'available' | 'pending' | 'sold';
}

/** Sends one request to `${target.url}${path}`, reads the whole answer and checks a documented one. */
export async function request(target: HttpTarget, path: string, options: HttpRequest = {}): Promise<HttpAnswer> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  Object.assign(headers, options.headers);
  // A redirect is an answer of the app like any other, checked as such, never followed.
  const init: RequestInit & { duplex?: 'half' } = { method, headers, redirect: 'manual' };
  const body = options.json === undefined ? options.body : jsonText(options.json);
  if (body !== undefined) init.body = body;
  if (body instanceof ReadableStream) init.duplex = 'half';
  const response = await fetch(`${target.url}${path}`, init);
  const text = await response.text();
  // No opt-out: a test that provokes an answer the document does not describe (a malformed request,
  // oversized headers) sends it over a raw socket, where nothing pretends to be a client of the API.
  await assertDocumentedAnswer(target, method, path, {
    status: response.status,
    headers: response.headers,
    bodyText: text,
  });
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

function jsonText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `count` requests one after the other; every answer in order. */
export async function requestInSequence(
  target: HttpTarget,
  path: string,
  options: HttpRequest,
  count: number,
): Promise<HttpAnswer[]> {
  const answers: HttpAnswer[] = [];
  for (let i = 0; i < count; i += 1) answers.push(await request(target, path, options));
  return answers;
}

/** `count` requests all sent at once; every answer in the order sent. */
export function requestConcurrently(
  target: HttpTarget,
  path: string,
  options: HttpRequest,
  count: number,
): Promise<HttpAnswer[]> {
  return Promise.all(Array.from({ length: count }, () => request(target, path, options)));
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

/**
 * Asserts an Error answer: the given status and code, a body of exactly {code, message, status}
 * with status equal to the HTTP status, no stack trace, and a message mentioning each of `mentions`.
 */
export function assertError(
  response: { readonly status: number; readonly text: string },
  status: number,
  code: string,
  ...mentions: string[]
): ErrorBody {
  assert.equal(
    response.status,
    status,
    `expected ${status} ${code}, got ${response.status}: ${response.text.slice(0, 300)}`,
  );
  const body = JSON.parse(response.text) as ErrorBody;
  assert.deepEqual(
    Object.keys(body).sort(),
    ['code', 'message', 'status'],
    `error body must be exactly {code, message, status}: ${response.text}`,
  );
  assert.equal(body.code, code, `error code: ${response.text}`);
  assert.equal(body.status, status, 'error body status equals the HTTP status');
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0, 'error message is not empty');
  assertNoStackTrace(response.text);
  for (const mention of mentions)
    assert.ok(
      body.message.includes(mention),
      `message ${JSON.stringify(body.message)} should mention ${JSON.stringify(mention)}`,
    );
  return body;
}

export function assertNoStackTrace(text: string): void {
  assert.doesNotMatch(
    text,
    /\bat .+\(.*:\d+:\d+\)|\bat (file|node):|\.ts:\d+|node_modules|Error: .*\n\s+at /,
    `response leaks a stack trace: ${text.slice(0, 300)}`,
  );
}
