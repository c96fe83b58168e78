import { AUDIT_TARGET_TYPES, type AuditAction, type AuditTargetType, type AuditVia } from '../domain/audit.ts';
import type { AuditEntryRecord, AuditPosition, AuditQuery, AuditStore } from '../domain/audit.ts';
import { ValidationError } from '../errors.ts';
import { parseInstant } from '../usage/instant.ts';

/**
 * A page of the trail as an operator asks for it: the filters as typed, `action` and `limit` checked
 * already. Where the page starts is a position, not a cursor: how a position travels to a client
 * and back (the admin API's opaque cursor) is the asker's business.
 */
export interface AuditPageRequest {
  /** `cli`, `cli:<OS user>`, an operator token's id, or a key's id (`key_…`). */
  readonly actor?: string;
  /** `<type>` or `<type>:<id>`: `account:acme`, `key:key_…`, `operator_token:<id>`. */
  readonly target?: string;
  readonly action?: AuditAction;
  /** `console`, `api`, `cli` or `key`: through what the change was made. */
  readonly via?: AuditVia;
  /** ISO 8601 instants: at or after `from`, before `to`. */
  readonly from?: string;
  readonly to?: string;
  readonly limit: number;
  /** The last entry of the page before; the page holds the entries older than it. */
  readonly after?: AuditPosition;
}

export interface AuditPage {
  /** Newest first. */
  readonly entries: readonly AuditEntryRecord[];
  /** Where the next page starts (its `after`); undefined on the last. */
  readonly next: AuditPosition | undefined;
}

const TOKEN_ID = /^[0-9A-Za-z]{16}$/;
const KEY_ID = /^key_[0-9A-Za-z]{1,60}$/;

/** The audit trail as operators read it: filtered pages, newest first. Entries are written with their changes. */
export class AuditService {
  private readonly store: AuditStore;

  constructor(store: AuditStore) {
    this.store = store;
  }

  /** One page; ValidationError (invalid_query) names a filter that is not well-formed. */
  async page(request: AuditPageRequest): Promise<AuditPage> {
    const query = auditQueryOf(request);
    // One more than the page: whether a next page exists, without an empty last one.
    const found = await this.store.list({ ...query, limit: request.limit + 1 });
    const entries = found.slice(0, request.limit);
    const last = entries.at(-1);
    const next = found.length > entries.length && last ? { at: last.at, id: last.id } : undefined;
    return { entries, next };
  }
}

function auditQueryOf(request: AuditPageRequest): AuditQuery {
  const from = request.from === undefined ? undefined : parseInstant('from', request.from);
  const to = request.to === undefined ? undefined : parseInstant('to', request.to);
  if (from !== undefined && to !== undefined && from >= to) {
    throw new ValidationError('invalid_query', `from must be before to (got from ${request.from}, to ${request.to})`);
  }
  return {
    ...(request.actor === undefined ? {} : { actor: actorOf(request.actor) }),
    ...(request.target === undefined ? {} : { target: targetOf(request.target) }),
    ...(request.action === undefined ? {} : { action: request.action }),
    ...(request.via === undefined ? {} : { via: request.via }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...(request.after === undefined ? {} : { olderThan: request.after }),
    limit: request.limit,
  };
}

function actorOf(actor: string): NonNullable<AuditQuery['actor']> {
  if (actor === 'cli') return { kind: 'cli' };
  if (actor.startsWith('cli:') && actor.length > 'cli:'.length) return { kind: 'cli', id: actor.slice('cli:'.length) };
  if (TOKEN_ID.test(actor)) return { kind: 'operator_token', id: actor };
  if (KEY_ID.test(actor)) return { kind: 'key', id: actor };
  throw new ValidationError(
    'invalid_query',
    "query parameter 'actor' must be cli, cli:<OS user>, an operator token's 16-character id or a key's id " +
      `(got ${JSON.stringify(actor)})`,
  );
}

function targetOf(target: string): NonNullable<AuditQuery['target']> {
  const colon = target.indexOf(':');
  const type = colon < 0 ? target : target.slice(0, colon);
  const id = colon < 0 ? undefined : target.slice(colon + 1);
  if (!isTargetType(type) || id === '') {
    throw new ValidationError(
      'invalid_query',
      `query parameter 'target' must be a type (${AUDIT_TARGET_TYPES.join(', ')}), alone or with :<id> as in ` +
        `account:acme ` +
        `(got ${JSON.stringify(target)})`,
    );
  }
  return id === undefined ? { type } : { type, id };
}

function isTargetType(type: string): type is AuditTargetType {
  return (AUDIT_TARGET_TYPES as readonly string[]).includes(type);
}
