import type { ApiKeyRecord } from '../../domain/keys.ts';
import type { AdminKey, KeyState } from './admin-schemas.ts';

/** Records as the admin API sends them: times as ISO 8601 strings. */

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

function keyState(key: ApiKeyRecord, now: number): KeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  if (key.bannedUntil !== null && key.bannedUntil > now) return 'banned';
  return 'active';
}

export function keyElement(key: ApiKeyRecord, now: number): AdminKey {
  return {
    id: key.id,
    name: key.name,
    createdBy: key.createdBy,
    revokedBy: key.revokedBy,
    createdAt: iso(key.createdAt),
    expiresAt: isoOrNull(key.expiresAt),
    revokedAt: isoOrNull(key.revokedAt),
    lastUsedAt: isoOrNull(key.lastUsedAt),
    bannedUntil: key.bannedUntil !== null && key.bannedUntil > now ? iso(key.bannedUntil) : null,
    scopes: [...key.scopes],
    state: keyState(key, now),
  };
}
