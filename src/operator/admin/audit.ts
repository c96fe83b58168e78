import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AuditEntryRecord } from '../../domain/audit.ts';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from './admin-openapi.ts';
import { afterAuditEntry, auditCursor } from './admin-cursors.ts';
import { AUDIT_LIMIT, AuditQuery, refs, type AdminAuditEntry } from './admin-schemas.ts';
import { iso } from './admin-views.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'audit'>;

const LINK = {
  type: 'string',
  description: 'On every page but the last: `</admin/v1/audit?…&cursor=…>; rel="next"`, the next page (same filters).',
} as const;

/** The audit trail: every change operators made, newest first. */
export const auditRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { audit } = options;

  app.get(
    `${ADMIN_PREFIX}/audit`,
    {
      schema: {
        operationId: 'listAuditEntries',
        tags: ['audit'],
        summary: 'The changes operators made',
        description:
          'Every change made through this API, the console or the CLI: accounts created and their plans ' +
          'changed, keys created and revoked, bans lifted, operator tokens created and revoked. Newest first, ' +
          'filtered by every parameter given; kept as long as the usage history (`USAGE_RETENTION_DAYS`). A ' +
          'malformed filter is `400 invalid_query` naming it.',
        querystring: AuditQuery,
        response: {
          200: adminAnswer('A page of entries.', refs.AuditTrail, { Link: LINK }),
          ...adminErrors(400),
        },
      },
    },
    async (request, reply) => {
      const { limit = AUDIT_LIMIT.default, cursor, ...filters } = request.query;
      // The cursor is this API's encoding of a position in the trail; the service pages by positions.
      const after = cursor === undefined ? {} : { after: afterAuditEntry(cursor) };
      const page = await audit.page({ ...filters, limit, ...after });
      const nextCursor = page.next === undefined ? null : auditCursor(page.next);
      if (nextCursor !== null) {
        const next = new URLSearchParams({ ...filters, limit: String(limit), cursor: nextCursor });
        reply.header('link', `<${ADMIN_PREFIX}/audit?${next.toString()}>; rel="next"`);
      }
      return reply.send({ entries: page.entries.map(auditElement), nextCursor });
    },
  );
};

function auditElement(entry: AuditEntryRecord): AdminAuditEntry {
  const { id, at, actor, via, action, target, before, after, requestId } = entry;
  return { id, at: iso(at), actor, via, action, target, before, after, requestId };
}
