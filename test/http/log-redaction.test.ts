import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/composition-root.ts';
import { REDACTED_KEY, redactKeys } from '../../src/http/redact.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { request } from '../support/http-client.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * No key reaches a log line, wherever a client put it: the process logger redacts key-like text
 * from every finished line, so the lines stay, with the rest of what they said.
 */

interface LogLine {
  readonly msg: string;
  readonly url?: string;
  readonly status?: number;
  readonly code?: string;
  readonly reason?: string;
}

/** Log lines kept in memory, as the process logger writes them. */
class LogCapture {
  readonly raw: string[] = [];
  readonly stream = { write: (line: string): void => void this.raw.push(line) };

  /** Lines written from `from` on, once one of them satisfies `until` (the access line comes after the answer). */
  async linesSince(from: number, until: (line: LogLine) => boolean): Promise<{ raw: string[]; parsed: LogLine[] }> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const raw = this.raw.slice(from);
      const parsed = raw.map((line) => JSON.parse(line) as LogLine);
      if (parsed.some(until)) return { raw, parsed };
      assert.ok(Date.now() < deadline, `no such line; lines: ${raw.join('')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

function assertNoKey(raw: readonly string[], key: string): void {
  const secret = key.slice('pst_'.length);
  for (const line of raw) {
    assert.ok(!line.includes(secret), `a log line holds the key: ${line}`);
    assert.doesNotMatch(line, /pst_[0-9A-Za-z]/, `a log line holds a key-like text: ${line}`);
  }
}

const isAccessLine = (line: LogLine): boolean => line.msg === 'request';

describeEachBackend('log lines never hold a key', (backend) => {
  let app: TestApp;
  let key: string;
  const capture = new LogCapture();

  before(async () => {
    app = await startTestApp({ backend, logger: createLogger('debug', capture.stream) });
    ({ key } = await app.newKey());
  });
  after(() => app.close());

  it('in the query: the access line keeps the rest of the URL', async () => {
    const from = capture.raw.length;
    const answer = await request(app, `/v1/pets?api_key=${key}&limit=5`, { key });
    // Refused, as any parameter the operation does not take: its message names the parameter, not its value.
    assert.equal(answer.status, 400);
    assertNoKey([answer.text], key);
    const { raw, parsed } = await capture.linesSince(from, isAccessLine);
    assertNoKey(raw, key);
    assert.equal(parsed.find(isAccessLine)?.url, `/v1/pets?api_key=${REDACTED_KEY}&limit=5`);
  });

  it('in the query, percent-encoded', async () => {
    const from = capture.raw.length;
    const encoded = `pst%5F${key.slice(4, 10)}%${key.charCodeAt(10).toString(16)}${key.slice(11)}`;
    await request(app, `/v1/pets?limit=5&api_key=${encoded}`, { key });
    const { raw, parsed } = await capture.linesSince(from, isAccessLine);
    assertNoKey(raw, key);
    for (const line of raw) assert.ok(!line.includes(key.slice(11)), `a log line holds the key: ${line}`);
    assert.equal(parsed.find(isAccessLine)?.url, `/v1/pets?limit=5&api_key=${REDACTED_KEY}`);
  });

  it('in the path, where its refusal quotes it', async () => {
    const from = capture.raw.length;
    const answer = await request(app, `/v1/pets/${key}`, { key });
    assert.equal(answer.status, 400);
    const { raw, parsed } = await capture.linesSince(from, isAccessLine);
    assertNoKey(raw, key);
    assert.equal(parsed.find(isAccessLine)?.url, `/v1/pets/${REDACTED_KEY}`);
    const refusal = parsed.find((line) => line.msg === 'request refused');
    assert.equal(refusal?.code, 'invalid_path');
    assert.ok(refusal.reason?.includes(REDACTED_KEY), `the refusal says what was wrong: ${refusal.reason}`);
  });

  it('in the path of a 404', async () => {
    const from = capture.raw.length;
    const answer = await request(app, `/v1/accounts/${key}/keys`, { key });
    assert.equal(answer.status, 404);
    const { raw, parsed } = await capture.linesSince(from, isAccessLine);
    assertNoKey(raw, key);
    assert.equal(parsed.find(isAccessLine)?.url, `/v1/accounts/${REDACTED_KEY}/keys`);
  });

  it('in a header that its refusal quotes', async () => {
    const from = capture.raw.length;
    const answer = await request(app, '/v1/pets', {
      key,
      method: 'POST',
      headers: { 'content-type': `text/${key}` },
      body: '{"name":"Rex"}',
    });
    assert.equal(answer.status, 415);
    const { raw, parsed } = await capture.linesSince(from, isAccessLine);
    assertNoKey(raw, key);
    const refusal = parsed.find((line) => line.msg === 'request refused');
    assert.equal(refusal?.code, 'unsupported_media_type');
    assert.ok(refusal.reason?.includes(`text/${REDACTED_KEY}`), `the refusal says what was wrong: ${refusal.reason}`);
  });

  it('in a body field that the validation message names', async () => {
    const from = capture.raw.length;
    const answer = await request(app, '/v1/pets', {
      key,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1, [key]: true }),
    });
    assert.equal(answer.status, 400);
    const { raw, parsed } = await capture.linesSince(from, isAccessLine);
    assertNoKey(raw, key);
    const refusal = parsed.find((line) => line.msg === 'request refused');
    assert.equal(refusal?.code, 'invalid_body');
    assert.ok(refusal.reason?.includes(`'${REDACTED_KEY}'`), `the refusal names the field: ${refusal.reason}`);
  });

  it('in a message a service logs', async () => {
    const from = capture.raw.length;
    app.services.logger.warn({ detail: `looked up ${key}` }, `failed for ${key}`);
    const { raw, parsed } = await capture.linesSince(from, (line) => line.msg.startsWith('failed for'));
    assertNoKey(raw, key);
    assert.equal(parsed.at(-1)?.msg, `failed for ${REDACTED_KEY}`);
  });
});

describe('redactKeys', () => {
  it('leaves text without a key as it is, the description of the key format included', () => {
    const text = '{"msg":"the API key is malformed: expected pst_ followed by 36 letters","url":"/v1/pets?x=1%20"}';
    assert.equal(redactKeys(text), text);
  });

  it('keeps a JSON line valid JSON', () => {
    const line = JSON.stringify({ msg: 'a "pst_abc\\" b', list: ['pst_x1', 'pst%5fy2\n'] });
    assert.deepEqual(JSON.parse(redactKeys(line)), {
      msg: `a "${REDACTED_KEY}\\" b`,
      list: [REDACTED_KEY, `${REDACTED_KEY}\n`],
    });
  });
});
