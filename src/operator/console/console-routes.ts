import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { sendKept } from '../../http/kept-reply.ts';
import { consoleModulePath, loadConsoleAssets, type ConsoleAsset } from './console-assets.ts';
import { CONSOLE_PAGES } from './console-page-table.ts';
import { consolePageHtml, loginPageHtml } from './console-pages.ts';

/**
 * The console's pages load nothing but their own scripts and styles, call nothing but this origin,
 * and cannot be framed: no inline script or style, so that text from the admin API can never run.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * Assets are the same for every operator and change with a release only; the pages link them with
 * their digest, so a new release is fetched at once. Private: they are served behind the token.
 */
const ASSET_CACHE_CONTROL = 'private, max-age=300';

const HTML = 'text/html; charset=utf-8';

/**
 * The operator console, on the operator listener: HTML shells filled in the browser from the admin
 * API (with the cookie `POST /admin/v1/session` sets), and their scripts and styles, uPlot's among
 * them, read from disk once, here. Only /console/login and its assets are served without a token;
 * the operator app's authentication answers everything else under /console first.
 */
export const consoleRoutes: FastifyPluginAsync = async (app) => {
  const assets = loadConsoleAssets();
  // Every answer under these routes, the authentication's 401s among them.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(SECURITY_HEADERS);
    done(null, payload);
  });

  for (const page of CONSOLE_PAGES) {
    const html = consolePageHtml(page, assets);
    app.get(page.url, { schema: { hide: true } }, (_request, reply) => sendPage(reply, html));
  }
  for (const [name, file] of Object.entries(assets.page)) {
    app.get(`/console/assets/${name}`, { schema: { hide: true } }, (_request, reply) => sendAsset(reply, file));
  }
  // This release's modules only: a page of another release finds none, rather than a mix of both.
  for (const [path, file] of assets.modules.files) {
    const url = consoleModulePath(assets.modules, path);
    app.get(url, { schema: { hide: true } }, (_request, reply) => sendAsset(reply, file));
  }

  const login = loginPageHtml(assets);
  // Open to everyone (public): the page that takes the token, and its own files.
  app.get('/console/login', { config: { public: true }, schema: { hide: true } }, (_request, reply) =>
    sendPage(reply, login),
  );
  for (const [name, file] of Object.entries(assets.login)) {
    app.get(`/console/login/assets/${name}`, { config: { public: true }, schema: { hide: true } }, (_request, reply) =>
      sendAsset(reply, file),
    );
  }
};

function sendPage(reply: FastifyReply, html: string): FastifyReply {
  // The shells hold no data, but a page left after logging out must not come back from a cache.
  return reply.header('content-type', HTML).header('cache-control', 'no-store').send(html);
}

/** The file's bytes: the core's response hook adds the ETag, answers If-None-Match with 304 and compresses. */
function sendAsset(reply: FastifyReply, file: ConsoleAsset): FastifyReply {
  return sendKept(reply.header('cache-control', ASSET_CACHE_CONTROL).type(file.contentType), file.representation);
}
