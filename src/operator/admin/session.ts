import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { adminErrors, adminNoContent } from './admin-openapi.ts';
import {
  cookieValue,
  INVALID_TOKEN,
  isSameOrigin,
  OPERATOR_COOKIE,
  secureAttribute,
  sendOperatorUnauthorized,
  sendTooManyFailures,
  SESSION_PATH,
} from '../operator-auth.ts';
import { ForbiddenError } from '../../errors.ts';
import { SessionBody } from './admin-schemas.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'gate'>;

/** The cookie's attributes: never readable by scripts, never sent along from another site. */
const COOKIE_ATTRIBUTES = 'HttpOnly; SameSite=Strict; Path=/';

/** The console session: log in (starts it, sets the cookie) and log out (ends it, clears the cookie). */
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
          'Checks the token, starts a console session of it and sets the session id (never the token) in the ' +
          'console cookie (HttpOnly, SameSite=Strict, Path=/; Secure over HTTPS; a browser-session cookie). The ' +
          'session ends after `OPERATOR_SESSION_IDLE_MINUTES` without a request, `OPERATOR_SESSION_MAX_HOURS` ' +
          'after the login, on logout, or when its token is revoked. Failures count toward the per-address limit ' +
          'of failed authentications. A request carrying an `Origin` must come from this listener.',
        security: [],
        body: SessionBody,
        response: {
          204: adminNoContent('Logged in.', {
            'Set-Cookie': {
              type: 'string',
              description: `\`${OPERATOR_COOKIE}=<session id>; ${COOKIE_ATTRIBUTES}\`, and \`; Secure\` over HTTPS.`,
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
      const session = await options.gate.startSession(verdict.token);
      reply.header('set-cookie', `${OPERATOR_COOKIE}=${session}; ${COOKIE_ATTRIBUTES}${secureAttribute(request)}`);
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
        description:
          "Ends the cookie's session on the server, so that the cookie opens nothing any more, and clears the " +
          'cookie. Needs no token; a request carrying the cookie must come from this listener (its `Origin`). ' +
          'Answers 204 for a session that had ended already, or without a cookie.',
        security: [],
        response: {
          204: adminNoContent('Logged out.', {
            'Set-Cookie': { type: 'string', description: 'The cookie, emptied and expired.' },
          }),
          ...adminErrors(403),
        },
      },
    },
    async (request, reply) => {
      const session = cookieValue(request.headers.cookie, OPERATOR_COOKIE);
      if (session !== undefined && session !== '') {
        if (!isSameOrigin(request)) throw new ForbiddenError("a logout must come from the console's own origin");
        await options.gate.endSession(session);
      }
      reply.header('set-cookie', `${OPERATOR_COOKIE}=; ${COOKIE_ATTRIBUTES}${secureAttribute(request)}; Max-Age=0`);
      return reply.code(204).send();
    },
  );
};
