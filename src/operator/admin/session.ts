import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { adminErrors, adminNoContent } from '../admin-openapi.ts';
import {
  INVALID_TOKEN,
  isSameOrigin,
  OPERATOR_COOKIE,
  sendOperatorUnauthorized,
  sendTooManyFailures,
  SESSION_PATH,
} from '../operator-auth.ts';
import { ForbiddenError } from '../../errors.ts';
import { SessionBody } from './admin-schemas.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'gate'>;

/** The console session: log in (sets the cookie) and log out. */
export const sessionRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    SESSION_PATH,
    {
      // Takes the token in its body; the gate's limit on failed attempts applies all the same.
      config: { public: true },
      schema: {
        operationId: 'logIn',
        tags: ['operator'],
        summary: 'Log in to the console',
        description:
          'Checks the token and sets it in the console cookie (HttpOnly, SameSite=Strict, Path=/; a session ' +
          'cookie). Failures count toward the per-address limit of failed authentications. A request carrying ' +
          'an `Origin` must come from this listener.',
        security: [],
        body: SessionBody,
        response: {
          204: adminNoContent('Logged in.', {
            'Set-Cookie': {
              type: 'string',
              description: `\`${OPERATOR_COOKIE}=<token>; HttpOnly; SameSite=Strict; Path=/\`.`,
            },
          }),
          ...adminErrors(400, 403, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const retryAfter = await options.gate.refusal(request);
      if (retryAfter !== undefined) return sendTooManyFailures(reply, retryAfter);
      if (request.headers.origin !== undefined && !isSameOrigin(request))
        throw new ForbiddenError("a login must come from the console's own origin");
      const verdict = await options.gate.verify(request.body.token);
      if (!verdict.ok) {
        await options.gate.recordFailure(request);
        request.log.info({ reason: verdict.reason }, 'operator token refused');
        return sendOperatorUnauthorized(reply, INVALID_TOKEN);
      }
      request.operatorToken = verdict.token;
      reply.header('set-cookie', `${OPERATOR_COOKIE}=${request.body.token}; HttpOnly; SameSite=Strict; Path=/`);
      return reply.code(204).send();
    },
  );

  app.delete(
    SESSION_PATH,
    {
      config: { public: true },
      schema: {
        operationId: 'logOut',
        tags: ['operator'],
        summary: 'Log out of the console',
        description: 'Clears the console cookie. Needs no token: it only ends what the browser holds.',
        security: [],
        response: {
          204: adminNoContent('Logged out.', {
            'Set-Cookie': { type: 'string', description: 'The cookie, emptied and expired.' },
          }),
          ...adminErrors(),
        },
      },
    },
    async (_request, reply) => {
      reply.header('set-cookie', `${OPERATOR_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
      return reply.code(204).send();
    },
  );
};
