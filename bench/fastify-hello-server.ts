import Fastify from 'fastify';
import type { BareResponses } from './bare-server.ts';

/**
 * Fastify's hello world: the bare server's canned answers (BARE_RESPONSES, the same bytes), each
 * from a route of its own in a Fastify app with its defaults (no logger), so that the service can
 * be set beside the framework it is built on as well as beside node:http. PORT and HOST: the address.
 */
async function main(): Promise<void> {
  const app = Fastify();
  const responses = JSON.parse(process.env['BARE_RESPONSES'] ?? '{}') as BareResponses;
  for (const [shape, { status, base64, contentEncoding }] of Object.entries(responses)) {
    const [method = 'GET', path = '/'] = shape.split(' ');
    const bytes = Buffer.from(base64, 'base64');
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
    if (contentEncoding !== undefined) headers['content-encoding'] = contentEncoding;
    app.route({
      method: method === 'POST' ? 'POST' : 'GET',
      url: (path.split('?')[0] ?? path).replace('{id}', ':id'),
      handler: (_request, reply) => reply.code(status).headers(headers).send(bytes),
    });
  }
  await app.listen({ port: Number(process.env['PORT']), host: process.env['HOST'] ?? '127.0.0.1' });
  process.once('SIGTERM', () => process.exit(0));
}

if (import.meta.main) await main();
