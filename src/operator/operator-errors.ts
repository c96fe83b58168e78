import type { FastifyInstance, FastifyReply } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { ConflictError } from '../errors.ts';
import { sendError } from '../http/error-body.ts';
import { createErrorHandler } from '../http/error-handler.ts';
import { excerpt } from '../http/quote.ts';

/** The admin API's own codes; every other code is the public API's, answered by sendError. */
const OWN_STATUS = { conflict: 409, forbidden: 403 } as const;
type OwnCode = keyof typeof OWN_STATUS;

/**
 * Answers with the Error body of one of the admin API's own codes. Its messages are the service's
 * own sentences around names that validation has bounded, so they need no clipping.
 */
export function sendOwnError(reply: FastifyReply, code: OwnCode, message: string): FastifyReply {
  const status = OWN_STATUS[code];
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify({ code, message, status }));
}

/**
 * The Error body for thrown errors and unknown paths, as on the public listener; a taken name is a
 * 409 `conflict` here, where the admin API creates accounts.
 */
export const operatorErrorAnswers = fastifyPlugin(
  async (app: FastifyInstance) => {
    const handle = createErrorHandler();
    app.setErrorHandler((error: Error, request, reply) => {
      if (error instanceof ConflictError) return sendOwnError(reply, 'conflict', error.message);
      return handle(error, request, reply);
    });
    app.setNotFoundHandler((request, reply) =>
      sendError(reply, 'not_found', `no route for ${request.method} ${excerpt(request.url.split('?')[0] ?? '')}`),
    );
  },
  { name: 'operator-error-answers' },
);
