import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { operatorTokenView } from '../../auth/operator-tokens.ts';
import { auditContextOf } from '../../audit/audit-actors.ts';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from './admin-openapi.ts';
import { OperatorTokenIdParams, OperatorTokenRef, refs } from './admin-schemas.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'operatorTokens'>;

/**
 * The operator tokens: listed and revoked. Creating one stays with the command-line tool, so that
 * whoever makes the first token has access to the store, not only to a token.
 */
export const operatorTokenRoutes: FastifyPluginAsync<Needs> = async (untyped, { operatorTokens }) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    `${ADMIN_PREFIX}/operator-tokens`,
    {
      schema: {
        operationId: 'listOperatorTokens',
        tags: ['operator'],
        summary: 'The operator tokens',
        description: 'As `petstore operator token list`: every token, never a secret or its hash.',
        response: { 200: adminAnswer('Every token, oldest first.', refs.OperatorTokens), ...adminErrors() },
      },
    },
    async (_request, reply) => {
      const tokens = await operatorTokens.list();
      return reply.send({ tokens: tokens.map(operatorTokenView) });
    },
  );

  app.post(
    `${ADMIN_PREFIX}/operator-tokens/:id/revoke`,
    {
      schema: {
        operationId: 'revokeOperatorToken',
        tags: ['operator'],
        summary: 'Revoke an operator token',
        description:
          'As `petstore operator token revoke`. Every instance refuses the token at once, and the console ' +
          'sessions it logged in end. Revoking twice keeps the first time; the token that makes the request ' +
          'may revoke itself.',
        params: OperatorTokenIdParams,
        response: { 200: adminAnswer('The revoked token.', OperatorTokenRef), ...adminErrors(400, 403, 404) },
      },
    },
    async (request, reply) => {
      const token = await operatorTokens.revoke(request.params.id, auditContextOf(request));
      return reply.send(operatorTokenView(token));
    },
  );
};
