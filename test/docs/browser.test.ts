import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_MISSING, launchChromium } from '../support/chromium.ts';
import { request } from '../support/http-client.ts';
import { StartedParts } from '../support/started-parts.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The /docs page in a real browser: Debian's chromium, driven by playwright-core (which downloads no
 * browser of its own). The page is opened under a host name other than localhost, over plain HTTP,
 * which is where a stray `upgrade-insecure-requests` once left it blank. Without chromium the suite
 * is skipped with the reason, unless CI=true: then it fails.
 */
const HOST = 'petstore.test';
const BIG_CATEGORY = '9223372036854775807';

/** What went wrong while the page ran: failed requests, console errors (CSP violations among them). */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('requestfailed', (failed) => problems.push(`${failed.url()}: ${failed.failure()?.errorText}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return problems;
}

describe('the /docs page in a browser', { skip: CHROMIUM_MISSING }, () => {
  let app: TestApp;
  let browser: Browser;
  let key: string;
  let origin: string;
  const parts = new StartedParts();

  before(async () => {
    [app, browser] = await Promise.all([
      parts.start(
        'the service',
        () => startTestApp(),
        (started) => started.close(),
      ),
      parts.start(
        'chromium',
        () => launchChromium(HOST),
        (started) => started.close(),
      ),
    ]);
    origin = `http://${HOST}:${new URL(app.url).port}`;
    ({ key } = await app.newKey());
    const created = await request(app, '/v1/pets', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: `{"name":"Wide","categoryId":${BIG_CATEGORY},"status":"available"}`,
    });
    assert.equal(created.status, 201, created.text);
  });

  after(() => parts.stopAll());

  /** Runs `work` on a new page opened at `path`, then asserts that nothing went wrong on the page. */
  async function onDocsPage(path: string, work: (page: Page) => Promise<void>): Promise<void> {
    const page = await browser.newPage();
    const problems = watchProblems(page);
    try {
      await page.goto(`${origin}${path}`);
      await work(page);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  }

  it('lists pets through Authorize, Try it out and Execute, with no failed request', async () => {
    await onDocsPage('/docs', async (page) => {
      assert.equal(await page.title(), 'Pet store API — reference');

      await page.click('.auth-wrapper .authorize');
      await page.fill('.auth-container input[type=text]', key);
      await page.click('.auth-container .modal-btn.authorize');
      await page.click('.auth-container .btn-done');

      const list = page.locator('#operations-pets-listPets');
      await list.locator('.opblock-summary').click();
      await list.locator('.try-out__btn').click();
      const sent = page.waitForRequest((sending) => new URL(sending.url()).pathname === '/v1/pets');
      await list.locator('.execute').click();
      assert.equal(new URL((await sent).url()).search, '', 'no parameter the user did not choose is sent');
      const live = list.locator('.live-responses-table');
      await live.locator('.response-col_status', { hasText: '200' }).waitFor();
      const body = await live.locator('.highlight-code').first().innerText();
      assert.match(body, /"name": "Wide"/);
      assert.ok(body.includes(`"categoryId": ${BIG_CATEGORY}`), `the int64 is shown digit for digit:\n${body}`);
      assert.match(await list.locator('.curl').innerText(), /Authorization: Bearer pst_/);

      const create = page.locator('#operations-pets-createPet');
      await create.locator('.opblock-summary').click();
      await create.locator('.try-out__btn').click();
      const example = JSON.parse(await create.locator('textarea.body-param__text').inputValue()) as unknown;
      assert.deepEqual(example, { name: 'Rex', categoryId: 3, status: 'available' });
    });
  });

  it('links its title to the document at /v1/openapi.json and names the shared schemas', async () => {
    await onDocsPage('/docs', async (page) => {
      const link = page.locator('.info .main a.link');
      assert.equal(await link.getAttribute('href'), `${origin}/v1/openapi.json`);
      assert.equal((await link.innerText()).trim(), `${origin}/v1/openapi.json`);

      // innerText is the text as rendered, so the letter case of a type is what the reader sees.
      const models = page.locator('section.models');
      const titled = (name: string) =>
        page.locator(':scope > .json-schema-2020-12-head .json-schema-2020-12__title', {
          hasText: new RegExp(`^${name}$`),
        });
      const model = (name: string) =>
        models.locator('article[data-json-schema-level="0"]').filter({ has: titled(name) });
      const TYPE = '.json-schema-2020-12-head > .json-schema-2020-12__attribute';
      const typeOf = (name: string) => model(name).locator(`:scope > ${TYPE}`);
      assert.equal(await typeOf('PetStatus').innerText(), 'string');
      assert.equal(await typeOf('Pets').innerText(), 'array<Pet>');

      // Expanding a schema resolves its references; the names stay.
      await model('Pets').locator(':scope > .json-schema-2020-12-head .json-schema-2020-12-accordion').click();
      assert.equal(await model('Pets').locator(`.json-schema-2020-12-keyword--items ${TYPE}`).innerText(), 'Pet');
      assert.equal(await typeOf('Pets').innerText(), 'array<Pet>');
      await model('Pet').locator(':scope > .json-schema-2020-12-head .json-schema-2020-12-accordion').click();
      const statusTitle = page.locator('.json-schema-2020-12__title', { hasText: /^status$/ });
      const status = model('Pet').locator('.json-schema-2020-12-property').filter({ has: statusTitle });
      assert.equal(await status.locator(TYPE).innerText(), 'PetStatus');
    });
  });

  it('shows the bounds and default of limit, and fills in no parameter the user did not choose', async () => {
    await onDocsPage('/docs', async (page) => {
      const list = page.locator('#operations-pets-listPets');
      await list.locator('.opblock-summary').click();
      const limit = list.locator('tr[data-param-name="limit"]');
      const described = await limit.innerText();
      assert.match(described, /from 1 to 100/);
      assert.match(described, /Default value\s*:\s*20/);
      assert.match(await list.locator('tr[data-param-name="status"]').innerText(), /available, pending, sold/);

      await list.locator('.try-out__btn').click();
      for (const name of ['limit', 'status', 'cursor']) {
        const field = list.locator(`tr[data-param-name="${name}"]`).locator('input, select');
        assert.equal(await field.inputValue(), '', `${name} is empty until the user fills it in`);
      }
      assert.match(await limit.innerText(), /from 1 to 100; 20 when absent/, 'the bounds stay in sight');

      const get = page.locator('#operations-pets-getPet');
      await get.locator('.opblock-summary').click();
      const petId = get.locator('tr[data-param-name="petId"]');
      assert.match(await petId.innerText(), /Example\s*:\s*42/, 'an example is shown, not filled in');
      await get.locator('.try-out__btn').click();
      assert.equal(await petId.locator('input').inputValue(), '');
    });
  });

  // /docs/static/index.html serves the page of /docs (src/http/docs-index.ts); test/http/docs-page.test.ts checks it.
  it('loads at /docs/ too, its assets and document found from there', async () => {
    await onDocsPage('/docs/', async (page) => {
      await page.locator('#operations-pets-listPets').waitFor();
      assert.equal(await page.title(), 'Pet store API — reference');
    });
  });
});
