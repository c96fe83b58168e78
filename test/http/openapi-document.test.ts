import assert from 'node:assert/strict';
import { petstoreVersion } from '../../src/version.ts';
import { before, describe, it } from 'node:test';
import { ERROR_CODES, HTTP_ERROR_CODES, isHttpErrorCode } from '../../src/errors.ts';
import { STATUS_OF } from '../../src/http/error-body.ts';
import { PET_STATUSES } from '../../src/domain/pet.ts';
import { assertError, request } from '../support/http-client.ts';
import { loadContract, pathTemplateOf, schemaErrors, type ContractDocument } from '../support/openapi-contract.ts';
import { rawExchange } from '../support/raw-http.ts';
import { RATE_LIMIT_HEADERS } from '../ratelimit/rate-limit-assertions.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

type Json = Record<string, unknown>;

const OPERATIONS = [
  ['/pets', 'get', 'listPets'],
  ['/pets', 'post', 'createPet'],
  ['/pets/{petId}', 'get', 'getPet'],
  ['/usage', 'get', 'getUsage'],
  ['/usage/history', 'get', 'getUsageHistory'],
  ['/keys', 'get', 'listKeys'],
  ['/keys', 'post', 'createKey'],
  ['/keys/{keyId}/revoke', 'post', 'revokeKey'],
  ['/keys/{keyId}/roll', 'post', 'rollKey'],
] as const;

/** The paths of the document, in sorted order. */
const PATHS = [
  '/keys',
  '/keys/{keyId}/revoke',
  '/keys/{keyId}/roll',
  '/pets',
  '/pets/{petId}',
  '/usage',
  '/usage/history',
];

const SHARED_HEADERS = [
  ...RATE_LIMIT_HEADERS,
  'WWW-Authenticate',
  'Location',
  'Link',
  'Deprecation',
  'Sunset',
  'Idempotent-Replayed',
  'Allow',
  'X-Request-Id',
  'Cache-Control',
  'ETag',
  'Vary',
  'Content-Encoding',
];

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function child(value: unknown, ...keys: string[]): Json {
  let node = value;
  for (const key of keys) {
    assert.ok(isJson(node), `no object at ${keys.join('/')}`);
    node = node[key];
  }
  assert.ok(isJson(node), `no object at ${keys.join('/')}`);
  return node;
}

function operation(document: Json, path: string, method: string): Json {
  return child(document, 'paths', path, method);
}

function responsesOf(document: Json, path: string, method: string): Array<[status: string, response: Json]> {
  return Object.entries(child(operation(document, path, method), 'responses')).map(([status, response]) => {
    assert.ok(isJson(response));
    return [status, response];
  });
}

/** Every `$ref` in the document with the JSON pointer where it sits. */
function referencesIn(value: unknown, at = '#'): Array<[where: string, ref: string]> {
  if (Array.isArray(value)) return value.flatMap((item, index) => referencesIn(item, `${at}/${index}`));
  if (!isJson(value)) return [];
  return Object.entries(value).flatMap(([key, item]): Array<[string, string]> => {
    if (key === '$ref' && typeof item === 'string') return [[at, item]];
    return referencesIn(item, `${at}/${key}`);
  });
}

function resolvePointer(document: Json, ref: string): unknown {
  assert.ok(ref.startsWith('#/'), `${ref} is not a local reference`);
  let node: unknown = document;
  for (const segment of ref.slice(2).split('/')) {
    node = isJson(node) ? node[segment.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  }
  return node;
}

/** The examples of a media type object: `example`, or the values of `examples`. */
function examplesOf(media: Json): unknown[] {
  if ('example' in media) return [media['example']];
  return Object.values(child(media, 'examples')).map((example) => child(example).value);
}

function validate(contract: ContractDocument, schema: Json, value: unknown): string | undefined {
  const check = contract.ajv.compile(schema);
  return check(value) ? undefined : contract.ajv.errorsText(check.errors);
}

async function fetchDocument(app: TestApp): Promise<Json> {
  const response = await request(app, '/v1/openapi.json');
  assert.equal(response.status, 200);
  const document: unknown = response.json();
  assert.ok(isJson(document));
  return document;
}

function rawStatusAndBody(raw: string): { status: number; body: unknown } {
  const split = raw.indexOf('\r\n\r\n');
  assert.ok(split > 0, `no HTTP response head in ${JSON.stringify(raw.slice(0, 200))}`);
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(raw)?.[1]);
  return { status, body: JSON.parse(raw.slice(split + 4)) };
}

describe('The OpenAPI document', () => {
  const app = appForSuite();
  let document: Json;
  let contract: ContractDocument;

  before(async () => {
    document = await fetchDocument(app);
    // The served bytes, not the app's own object: this suite is about what clients get.
    contract = await loadContract({ url: app.url });
  });

  it('is what the app generates, which is where request() reads it from for an app in this process', () => {
    assert.deepEqual(document, JSON.parse(JSON.stringify(app.app.swagger())));
  });

  it('is OpenAPI 3.1 with a title, a version, an MIT license and only local references that resolve', () => {
    assert.equal(document['openapi'], '3.1.0');
    const info = child(document, 'info');
    assert.equal(info['title'], 'Pet store');
    assert.equal(info['version'], petstoreVersion());
    assert.deepEqual(info['license'], { name: 'MIT', identifier: 'MIT' });
    const references = referencesIn(document);
    assert.ok(references.length > 50, `only ${references.length} references`);
    for (const [where, ref] of references) {
      assert.ok(isJson(resolvePointer(document, ref)), `${where}: ${ref} resolves to nothing`);
    }
  });

  it('has the server URL ending in /v1 and paths relative to it', () => {
    assert.deepEqual(document['servers'], [{ url: '/v1' }]);
    assert.deepEqual(Object.keys(child(document, 'paths')).sort(), PATHS);
    for (const [path, method, operationId] of OPERATIONS) {
      assert.equal(operation(document, path, method)['operationId'], operationId);
    }
    assert.equal(pathTemplateOf(contract, '/v1/pets?limit=5'), '/pets');
    assert.equal(pathTemplateOf(contract, '/v1/pets/7'), '/pets/{petId}');
    assert.equal(pathTemplateOf(contract, '/pets/7'), undefined, 'a path outside the server base does not match');
  });

  it('prefixes the server URL with PUBLIC_BASE_URL', async () => {
    const behindProxy = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://pets.example.com/store/' } });
    try {
      const served = await fetchDocument(behindProxy);
      assert.deepEqual(served['servers'], [{ url: 'https://pets.example.com/store/v1' }]);
      assert.deepEqual(Object.keys(child(served, 'paths')).sort(), PATHS);
    } finally {
      await behindProxy.close();
    }
  });

  it('lists exactly the HTTP error codes as the enum of Error.code, each with its status', () => {
    const code = child(document, 'components', 'schemas', 'Error', 'properties', 'code');
    assert.equal(code['type'], 'string');
    assert.deepEqual(code['enum'], [...HTTP_ERROR_CODES]);
    assert.equal(isHttpErrorCode('conflict'), false, 'conflict is an operator-only code');
    // One table gives every code its status, the operator side's codes among them.
    assert.deepEqual(Object.keys(STATUS_OF).sort(), [...ERROR_CODES].sort());
    assert.equal(STATUS_OF.request_timeout, 408);
    assert.equal(STATUS_OF.headers_too_large, 431);
    const description = String(child(document, 'info')['description']);
    for (const name of HTTP_ERROR_CODES) assert.ok(description.includes(`\`${name}\``), `description lists ${name}`);
    assert.ok(schemaErrors(contract, 'Error', { code: 'conflict', message: 'x', status: 409 }));
  });

  it('names the pet status once, a plain string enum that Pet, NewPet and the status filter refer to', () => {
    const status = child(document, 'components', 'schemas', 'PetStatus');
    // An `anyOf` of constants would show as `string | (string | string | string)` instead of a choice.
    assert.deepEqual({ type: status['type'], enum: status['enum'] }, { type: 'string', enum: [...PET_STATUSES] });
    assert.equal(status['anyOf'], undefined);
    assert.equal(typeof status['description'], 'string');
    const reference = { $ref: '#/components/schemas/PetStatus' };
    assert.deepEqual(child(document, 'components', 'schemas', 'Pet', 'properties', 'status'), reference);
    assert.deepEqual(child(document, 'components', 'schemas', 'NewPet', 'properties', 'status'), reference);
    const parameters = operation(document, '/pets', 'get')['parameters'];
    assert.ok(Array.isArray(parameters));
    const filter = child(parameters.find((parameter) => isJson(parameter) && parameter['name'] === 'status'));
    assert.deepEqual(filter['schema'], reference);
    assert.equal(filter['description'], status['description'], 'the filter is described by the schema it refers to');
    for (const name of PET_STATUSES) assert.equal(schemaErrors(contract, 'PetStatus', name), undefined);
    assert.ok(schemaErrors(contract, 'PetStatus', 'lost'));
    assert.ok(schemaErrors(contract, 'Pet', { id: 1, name: 'Rex', categoryId: 3, status: 'lost' }));
  });

  it('still names the status choices in validation errors', async () => {
    const { key } = await app.newKey();
    assertError(await request(app, '/v1/pets?status=lost', { key }), 400, 'invalid_query', 'available, pending, sold');
    const json = { name: 'Rex', categoryId: 1, status: 'lost' };
    const refused = await request(app, '/v1/pets', { method: 'POST', key, json });
    assertError(refused, 400, 'invalid_body', 'available, pending, sold');
  });

  it('defines the shared headers once and refers to them from every response', () => {
    const components = child(document, 'components', 'headers');
    assert.deepEqual(Object.keys(components).sort(), [...SHARED_HEADERS].sort());
    for (const name of SHARED_HEADERS) {
      const header = child(components, name);
      assert.equal(typeof header['description'], 'string', `${name} has a description`);
      assert.ok(['integer', 'string'].includes(String(child(header, 'schema')['type'])), `${name} has a type`);
    }
    for (const [path, method] of OPERATIONS) {
      for (const [status, response] of responsesOf(document, path, method)) {
        const headers = child(response, 'headers');
        for (const [name, header] of Object.entries(headers)) {
          assert.deepEqual(
            child(header)['$ref'],
            `#/components/headers/${name}`,
            `${method} ${path} ${status}: ${name} refers to its component`,
          );
        }
        const everywhere = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy'];
        for (const name of [...everywhere, 'X-Request-Id', 'Cache-Control']) {
          assert.ok(name in headers, `${method} ${path} ${status} carries ${name}`);
        }
        const specific: Record<string, string> = { '401': 'WWW-Authenticate', '405': 'Allow', '429': 'Retry-After' };
        const expected = specific[status];
        if (expected) assert.ok(expected in headers, `${method} ${path} ${status} carries ${expected}`);
      }
    }
    const created = child(operation(document, '/pets', 'post'), 'responses', '201', 'headers');
    assert.ok('Location' in created && 'Idempotent-Replayed' in created);
    const gotPet = child(operation(document, '/pets/{petId}', 'get'), 'responses', '200', 'headers');
    for (const name of ['Deprecation', 'Sunset', 'Link']) assert.ok(name in gotPet, `getPet 200 carries ${name}`);
    assert.ok('Link' in child(operation(document, '/pets', 'get'), 'responses', '200', 'headers'));
  });

  it('documents 405 method_not_allowed with Allow on each operation', () => {
    for (const [path, method] of OPERATIONS) {
      const response = child(operation(document, path, method), 'responses', '405');
      assert.deepEqual(child(response, 'headers', 'Allow'), { $ref: '#/components/headers/Allow' });
      const media = child(response, 'content', 'application/json');
      assert.deepEqual(media['schema'], { $ref: '#/components/schemas/Error' });
      assert.deepEqual(
        examplesOf(media).map((example) => child(example)['code']),
        ['method_not_allowed'],
      );
    }
  });

  it('gives every request and response body an example valid against its schema', () => {
    const requestMedia = child(operation(document, '/pets', 'post'), 'requestBody', 'content', 'application/json');
    assert.deepEqual(requestMedia['schema'], { $ref: '#/components/schemas/NewPet' });
    assert.equal(validate(contract, child(requestMedia, 'schema'), requestMedia['example']), undefined);
    assert.equal(schemaErrors(contract, 'NewPet', requestMedia['example']), undefined);

    const seenSchemas = new Set<unknown>();
    for (const [path, method] of OPERATIONS) {
      for (const [status, response] of responsesOf(document, path, method)) {
        // A 304 has no body (test/http/conditional-requests.test.ts checks it).
        if (status === '304') continue;
        const media = child(response, 'content', 'application/json');
        const schema = child(media, 'schema');
        seenSchemas.add(schema['$ref']);
        const examples = examplesOf(media);
        assert.ok(examples.length > 0, `${method} ${path} ${status} has an example`);
        for (const example of examples) {
          const problem = validate(contract, schema, example);
          assert.equal(problem, undefined, `${method} ${path} ${status}: ${problem} in ${JSON.stringify(example)}`);
          if (Number(status) >= 400) {
            const error = child(example);
            assert.equal(error['status'], Number(status), `${method} ${path} ${status}: example status`);
            const code = String(error['code']);
            assert.ok(isHttpErrorCode(code) && STATUS_OF[code] === Number(status), `${code} answers ${status}`);
            assert.ok(String(error['message']).length > 10, 'the example message is a real one');
          }
        }
      }
    }
    assert.deepEqual([...seenSchemas].sort(), [
      '#/components/schemas/CreatedKey',
      '#/components/schemas/Error',
      '#/components/schemas/Key',
      '#/components/schemas/Keys',
      '#/components/schemas/Pet',
      '#/components/schemas/Pets',
      '#/components/schemas/Usage',
      '#/components/schemas/UsageHistory',
    ]);
    const listExample = child(operation(document, '/pets', 'get'), 'responses', '200', 'content', 'application/json');
    assert.ok(Array.isArray(listExample['example']) && listExample['example'].length > 1, 'a page of several pets');
  });

  it('documents 400 with an example per validation code and 429 with rate_limited and key_banned', () => {
    const codesOf = (path: string, method: string, status: string): unknown[] =>
      examplesOf(child(operation(document, path, method), 'responses', status, 'content', 'application/json')).map(
        (example) => child(example)['code'],
      );
    assert.deepEqual(codesOf('/pets', 'post', '400'), [
      'invalid_json',
      'invalid_body',
      'invalid_query',
      'invalid_path',
      'invalid_host',
    ]);
    assert.deepEqual(codesOf('/usage', 'get', '400'), ['invalid_host', 'invalid_query', 'invalid_body']);
    assert.deepEqual(codesOf('/pets', 'get', '429'), ['rate_limited', 'key_banned']);
    assert.deepEqual(codesOf('/pets/{petId}', 'get', '410'), ['gone']);
  });
});

describe('Raw-socket error answers', () => {
  const app = appForSuite({ env: { REQUEST_TIMEOUT_MS: '1000' } });

  it('answers headers that are too large with 431 headers_too_large', async () => {
    const raw = await rawExchange(app.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(100_000)}\r\n\r\n`);
    const { status, body } = rawStatusAndBody(raw);
    assert.equal(status, 431);
    assert.deepEqual(body, { code: 'headers_too_large', message: 'the request headers are too large', status: 431 });
    assert.equal(schemaErrors(await loadContract(app), 'Error', body), undefined);
  });

  it('answers a request that does not arrive in time with 408 request_timeout', async () => {
    const raw = await rawExchange(app.url, 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthor');
    const { status, body } = rawStatusAndBody(raw);
    assert.equal(status, 408);
    assert.deepEqual(body, { code: 'request_timeout', message: 'the request did not arrive in time', status: 408 });
    assert.equal(schemaErrors(await loadContract(app), 'Error', body), undefined);
  });
});
