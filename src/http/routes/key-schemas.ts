import { Type, type Static } from 'typebox';
import { KeyScopesSchema } from '../../auth/key-scopes-schema.ts';

/**
 * The account holder's keys on the wire: what GET /v1/keys answers, and the examples of the OpenAPI
 * document. A key's secret is never here: only the answer that creates a key carries it, once.
 */

const Instant = (description: string) => Type.String({ format: 'date-time', description });
const NullableInstant = (description: string) => Type.Union([Instant(description), Type.Null()]);

const KEY_ID = {
  pattern: '^key_[0-9A-Za-z]{1,60}$',
  description: "The key's non-secret id.",
  examples: ['key_3kq9x2m7w1Jd8QpZ'],
} as const;

export const HolderKeySchema = Type.Object(
  {
    id: Type.String(KEY_ID),
    scopes: KeyScopesSchema('What the key may do; fixed when it was created.'),
    createdAt: Instant('When the key was created.'),
    lastUsedAt: NullableInstant('When it was last used (recorded within a minute or so); null if never.'),
    expiresAt: NullableInstant('When it expires (or expired); null if it never does.'),
    revokedAt: NullableInstant('When it was revoked; null if it was not.'),
  },
  { $id: 'Key', additionalProperties: false, description: "A key of the caller's account, without its secret." },
);
export type HolderKey = Static<typeof HolderKeySchema>;
export const HolderKeyRef = Type.Unsafe<HolderKey>(Type.Ref('Key'));

export const HolderKeysSchema = Type.Array(HolderKeyRef, {
  $id: 'Keys',
  description: "A page of the account's keys, oldest first.",
});
export const HolderKeysRef = Type.Unsafe<HolderKey[]>(Type.Ref('Keys'));

/** A page's size: the bounds validate `limit`, and its description states them. */
const PAGE_LIMIT = { minimum: 1, maximum: 100, default: 20 } as const;

export const ListKeysQuerySchema = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      ...PAGE_LIMIT,
      description: `Most keys to return, from 1 to 100; ${PAGE_LIMIT.default} when absent.`,
      'x-expectation': 'an integer from 1 to 100',
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Opaque position from the `next` link of the previous page.',
      'x-expectation': 'the opaque cursor of a Link rel="next" header',
    }),
  ),
});

export const keySchemas = [HolderKeySchema, HolderKeysSchema] as const;

export const HOLDER_KEY_EXAMPLE: HolderKey = {
  id: 'key_3kq9x2m7w1Jd8QpZ',
  scopes: ['pets:read', 'pets:write', 'usage:read', 'keys:manage'],
  createdAt: '2026-11-02T09:15:00.000Z',
  lastUsedAt: '2026-11-25T10:04:12.000Z',
  expiresAt: null,
  revokedAt: null,
};

export const HOLDER_KEYS_EXAMPLE: HolderKey[] = [
  HOLDER_KEY_EXAMPLE,
  {
    id: 'key_8fz2p5c0qaLm4RtY',
    scopes: ['pets:read'],
    createdAt: '2026-11-20T16:40:00.000Z',
    lastUsedAt: null,
    expiresAt: '2027-02-18T16:40:00.000Z',
    revokedAt: null,
  },
];
