import { Type, type Static } from 'typebox';
import { ROLL_GRACE } from '../../auth/holder-keys.ts';
import { KEY_SCOPES_EXPECTATION, KeyScopesSchema } from '../../auth/key-scopes-schema.ts';

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

/** Who created or revoked a key, as its holder sees it: the operator (whoever of them), or a key of the account. */
const KeyMakerSchema = Type.Union([
  Type.Object(
    { kind: Type.Literal('operator') },
    { additionalProperties: false, description: "The service's operator (the CLI, the admin API or the console)." },
  ),
  Type.Object(
    { kind: Type.Literal('key'), id: Type.String({ ...KEY_ID, description: 'The key of the account that did it.' }) },
    { additionalProperties: false, description: 'A key of the account, through this API.' },
  ),
]);

/** A key's name: what its holder calls it, to tell keys apart in listings. */
const KeyName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$',
  description: 'What you call the key: 1 to 100 characters, no control characters.',
  examples: ['dashboard'],
  'x-expectation': 'a string of 1 to 100 characters without control characters',
});

export const HolderKeySchema = Type.Object(
  {
    id: Type.String(KEY_ID),
    name: Type.Union([KeyName, Type.Null()], {
      description: 'What its holder called it; null for a key the operator issued without one.',
    }),
    scopes: KeyScopesSchema('What the key may do; fixed when it was created.'),
    createdBy: KeyMakerSchema,
    revokedBy: Type.Union([KeyMakerSchema, Type.Null()], { description: 'Who revoked it; null if it was not.' }),
    createdAt: Instant('When the key was created.'),
    lastUsedAt: NullableInstant('When it was last used (written back every few seconds); null if never.'),
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

export const CreatedHolderKeySchema = Type.Object(
  {
    key: Type.String({
      pattern: '^pst_[0-9A-Za-z]{36}$',
      description: 'The new key itself: in this answer only (and its replay to the same caller), never again.',
    }),
    ...HolderKeySchema.properties,
  },
  { $id: 'CreatedKey', additionalProperties: false, description: 'A new key, with its secret.' },
);
export type CreatedHolderKey = Static<typeof CreatedHolderKeySchema>;
export const CreatedHolderKeyRef = Type.Unsafe<CreatedHolderKey>(Type.Ref('CreatedKey'));

/** The longest lifetime a key may be given: ten years. */
const MAX_LIFETIME_SECONDS = 315_360_000;

export const NewHolderKeySchema = Type.Object(
  {
    name: KeyName,
    scopes: KeyScopesSchema(
      'What the new key may do: one or more scopes, each held by the calling key; `keys:manage` only if named.',
      KEY_SCOPES_EXPECTATION,
    ),
    expiresInSeconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: MAX_LIFETIME_SECONDS,
        description: 'Seconds from now until the key expires, 60 to 315360000 (ten years); absent: never.',
        examples: [7_776_000],
        'x-expectation': `an integer from 60 to ${MAX_LIFETIME_SECONDS}`,
      }),
    ),
  },
  {
    $id: 'NewKey',
    additionalProperties: false,
    description: 'Body of createKey. Any other field is refused.',
  },
);
export type NewHolderKeyBody = Static<typeof NewHolderKeySchema>;
export const NewHolderKeyRef = Type.Unsafe<NewHolderKeyBody>(Type.Ref('NewKey'));

export const RollKeySchema = Type.Object(
  {
    gracePeriodSeconds: Type.Optional(
      Type.Integer({
        minimum: ROLL_GRACE.minimum,
        maximum: ROLL_GRACE.maximum,
        description:
          `How long the old key keeps working, in seconds: ${ROLL_GRACE.minimum} (it stops at once) to ` +
          `${ROLL_GRACE.maximum} (7 days); absent: ${ROLL_GRACE.default} (24 hours).`,
        examples: [3600],
        'x-expectation': `an integer from ${ROLL_GRACE.minimum} to ${ROLL_GRACE.maximum}`,
      }),
    ),
  },
  {
    $id: 'RollKey',
    additionalProperties: false,
    description: 'Body of rollKey: `{}` for the default grace period. Any other field is refused.',
  },
);
export type RollKeyBody = Static<typeof RollKeySchema>;
export const RollKeyRef = Type.Unsafe<RollKeyBody>(Type.Ref('RollKey'));

export const KeyIdParamsSchema = Type.Object({
  keyId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "The key's id, as GET /keys lists it.",
    examples: ['key_8fz2p5c0qaLm4RtY'],
    'x-expectation': "a key's id, such as key_8fz2p5c0qaLm4RtY",
  }),
});

export const keySchemas = [
  HolderKeySchema,
  HolderKeysSchema,
  CreatedHolderKeySchema,
  NewHolderKeySchema,
  RollKeySchema,
] as const;

export const HOLDER_KEY_EXAMPLE: HolderKey = {
  id: 'key_3kq9x2m7w1Jd8QpZ',
  name: null,
  scopes: ['pets:read', 'pets:write', 'usage:read', 'keys:manage'],
  createdBy: { kind: 'operator' },
  revokedBy: null,
  createdAt: '2026-11-02T09:15:00.000Z',
  lastUsedAt: '2026-11-25T10:04:12.000Z',
  expiresAt: null,
  revokedAt: null,
};

export const HOLDER_KEYS_EXAMPLE: HolderKey[] = [
  HOLDER_KEY_EXAMPLE,
  {
    id: 'key_8fz2p5c0qaLm4RtY',
    name: 'dashboard',
    scopes: ['pets:read', 'usage:read'],
    createdBy: { kind: 'key', id: 'key_3kq9x2m7w1Jd8QpZ' },
    revokedBy: null,
    createdAt: '2026-11-20T16:40:00.000Z',
    lastUsedAt: null,
    expiresAt: '2027-02-18T16:40:00.000Z',
    revokedAt: null,
  },
];

export const CREATED_HOLDER_KEY_EXAMPLE: CreatedHolderKey = {
  key: 'pst_7Hq2LmX9cVb4Rt1NwZ8kP3sD6fG0jY5aE2uK',
  ...(HOLDER_KEYS_EXAMPLE[1] as HolderKey),
};
