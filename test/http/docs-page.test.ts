import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PET_STATUSES } from '../../src/domain/pet.ts';
import { request } from '../support/http-client.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

type Json = Record<string, unknown>;

/** What a reverse proxy in front of the service sends (docs/operations.md, the nginx example). */
const PROXIED = { host: 'pets.example.org', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.7' };

function directives(policy: string | null): Map<string, string> {
  assert.ok(policy, 'the answer carries a Content-Security-Policy');
  const entries = policy
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part): [string, string] => {
      const [name = '', ...values] = part.split(/\s+/);
      return [name, values.join(' ')];
    });
  return new Map(entries);
}

function parameter(document: Json, path: string, name: string): Json {
  const operation = (document['paths'] as Record<string, Record<string, { parameters: Json[] }>>)[path]?.['get'];
  const found = operation?.parameters.find((candidate) => candidate['name'] === name);
  assert.ok(found, `GET ${path} has the parameter ${name}`);
  return found;
}

describe('the /docs page (served files and document)', () => {
  let app: TestApp;
  let document: Json;

  before(async () => {
    app = await startTestApp();
    document = (await request(app, '/v1/openapi.json')).json<Json>();
  });
  after(() => app.close());

  it('sends a strict Content-Security-Policy, without upgrade-insecure-requests, on the page and assets', async () => {
    for (const path of ['/docs', '/docs/', '/docs/static/index.html', '/docs/static/swagger-initializer.js']) {
      const answer = await request(app, path, { headers: PROXIED });
      assert.equal(answer.status, 200, path);
      const policy = directives(answer.headers.get('content-security-policy'));
      assert.equal(policy.has('upgrade-insecure-requests'), false, `${path}: assets stay on the page's scheme`);
      assert.equal(policy.get('script-src'), "'self'", `${path}: no inline or foreign script`);
      assert.equal(policy.get('style-src'), "'self'", path);
      assert.equal(policy.get('connect-src'), "'self'", path);
      assert.equal(policy.get('object-src'), "'none'", path);
    }
  });

  it('is titled, and names its assets without a scheme or host, behind a proxy too', async () => {
    for (const path of ['/docs', '/docs/']) {
      const html = (await request(app, path, { headers: PROXIED })).text;
      assert.match(html, /<title>Pet store API — reference<\/title>/);
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
      assert.ok(assets.some((asset) => asset.endsWith('/swagger-initializer.js')));
      for (const asset of assets) assert.doesNotMatch(asset, /^([a-z]+:)?\/\//i, `${path}: ${asset}`);
      assert.doesNotMatch(html, /<script>|<script [^>]*>[^<\s]/, `${path}: no inline script`);
    }
  });

  it('starts the page with its own script, which loads the document from its public address', async () => {
    const scriptPath = '/docs/static/swagger-initializer.js';
    const script = await request(app, scriptPath, { headers: PROXIED });
    assert.match(script.headers.get('content-type') ?? '', /^application\/javascript/);
    assert.doesNotMatch(script.text, /pets\.example\.org|https?:\/\//, 'no address is written into it');
    // Relative to the script, so a path prefix added by a proxy carries over to the document.
    const relative = /new URL\('([^']+)', document\.currentScript\.src\)/.exec(script.text)?.[1];
    assert.ok(relative, 'the script finds the document from its own address');
    const { pathname } = new URL(relative, `http://any.host/store${scriptPath}`);
    assert.equal(pathname, '/store/v1/openapi.json');
    assert.deepEqual((await request(app, new URL(relative, `${app.url}${scriptPath}`).pathname)).json(), document);
  });

  it('lets "Try it out" reach PUBLIC_BASE_URL when it names another origin', async () => {
    const other = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://api.example.org/' } });
    try {
      const policy = directives((await request(other, '/docs')).headers.get('content-security-policy'));
      assert.equal(policy.get('connect-src'), "'self' https://api.example.org");
    } finally {
      await other.close();
    }
  });

  it('documents the status filter by the PetStatus schema, a plain enum with an example', () => {
    const status = parameter(document, '/pets', 'status');
    assert.deepEqual(status['schema'], { $ref: '#/components/schemas/PetStatus' });
    assert.equal(status['description'], 'Availability of a pet.');
    const schema = ((document['components'] as Json)['schemas'] as Record<string, Json>)['PetStatus'] ?? {};
    // An `anyOf` of constants would show as `string | (string | string | string)` instead of a choice.
    assert.equal(schema['type'], 'string');
    assert.deepEqual(schema['enum'], [...PET_STATUSES]);
    assert.equal('anyOf' in schema, false);
    assert.deepEqual(schema['examples'], ['available']);
  });

  it('states the bounds and default of limit in its schema and in words', () => {
    const limit = parameter(document, '/pets', 'limit');
    const schema = limit['schema'] as Json;
    assert.deepEqual([schema['minimum'], schema['maximum'], schema['default']], [1, 100, 20]);
    // The page shows no minimum or maximum of a parameter: the description says them.
    assert.equal(limit['description'], 'Most pets to return, from 1 to 100; 20 when absent.');
  });

  it('gives every request body and parameter a realistic example, but no made-up cursor', () => {
    assert.equal(parameter(document, '/pets/{petId}', 'petId')['example'], 42);
    assert.equal((parameter(document, '/pets', 'limit')['schema'] as Json)['default'], 20);
    assert.equal('example' in parameter(document, '/pets', 'cursor'), false, 'a made-up cursor would be sent');
    const post = (document['paths'] as Record<string, Record<string, Json>>)['/pets']?.['post'];
    const media = (post?.['requestBody'] as { content: Record<string, Json> }).content['application/json'];
    assert.deepEqual(media?.['example'], { name: 'Rex', categoryId: 3, status: 'available' });
    const newPet = ((document['components'] as Json)['schemas'] as Record<string, { properties: Json }>)['NewPet'];
    const examplesOf = (field: string) => (newPet?.properties[field] as Json)['examples'];
    assert.deepEqual(examplesOf('name'), ['Rex']);
    assert.deepEqual(examplesOf('categoryId'), [3]);
  });
});
