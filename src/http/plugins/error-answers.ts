import type { FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { sendError } from '../error-body.ts';
import { createErrorHandler, type ErrorHandlerOptions } from '../error-handler.ts';
import { excerpt } from '../quote.ts';

/** The Error body for thrown errors (error-handler.ts) and for paths no route serves. */
export const errorAnswers = fastifyPlugin<ErrorHandlerOptions>(
  async (app: FastifyInstance, options: ErrorHandlerOptions) => {
    app.setErrorHandler(createErrorHandler(options));
    app.setNotFoundHandler((request, reply) =>
      sendError(reply, 'not_found', `no route for ${request.method} ${excerpt(request.url.split('?')[0] ?? '')}`),
    );
  },
  { name: 'error-answers' },
);
