/**
 * The Pet, defined once: `PET_FIELDS`. Every other form of it is made from this table, or fails to
 * compile when it disagrees: the record types below, the wire JSON (pets/pet-json.ts) and its schema
 * (pets/pet-schemas.ts), the idempotency fingerprint and the cache's size estimate
 * (pets/pet-service.ts), the `pets` table's row type (storage/database-schema.ts) and the statements
 * that write and read it (storage/sql-store.ts, storage/postgres-dialect.ts).
 */

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

/**
 * What a kind of field holds, and so how every layer writes and reads it:
 * - `generated-id`: drawn by storage on insertion, never supplied; a safe integer, written as digits.
 * - `text`: any string, written as a JSON string.
 * - `int64`: an exact int64 kept as a bigint (a number would round beyond 2^53), written as digits.
 * - `nullable-enum`: one of the field's `values` or null; a JSON string, left out of the JSON when null.
 * Each layer handles kinds in a `{ [K in PetFieldKind]: … }` map, so a new kind fails to compile
 * until every layer handles it.
 */
export interface PetFieldKinds {
  readonly 'generated-id': number;
  readonly text: string;
  readonly int64: bigint;
  readonly 'nullable-enum': string | null;
}

export type PetFieldKind = keyof PetFieldKinds;
/** The kinds a creator supplies: all but those storage draws. */
export type SuppliedPetFieldKind = Exclude<PetFieldKind, 'generated-id'>;

type PetFieldSpec =
  | { readonly kind: Exclude<PetFieldKind, 'nullable-enum'>; readonly column: string }
  | { readonly kind: 'nullable-enum'; readonly column: string; readonly values: readonly string[] };

/**
 * The fields, in the order of the wire JSON. A field's name is its JSON key and the record's
 * property; `column` is its column in the `pets` table. A new field also needs a migration that adds
 * its column (storage/migrations.ts) and its wire schema (pets/pet-schemas.ts, checked against this).
 * The first field is never left out of the JSON.
 */
export const PET_FIELDS = {
  id: { kind: 'generated-id', column: 'id' },
  name: { kind: 'text', column: 'name' },
  categoryId: { kind: 'int64', column: 'category_id' },
  status: { kind: 'nullable-enum', column: 'status', values: PET_STATUSES },
} as const satisfies Readonly<Record<string, PetFieldSpec>>;

type PetFields = typeof PET_FIELDS;
export type PetFieldName = keyof PetFields;
export type PetColumn = PetFields[PetFieldName]['column'];

/** The value a field holds: its kind's, narrowed to its `values` for an enum. */
type PetFieldValue<F extends PetFieldSpec> = {
  readonly 'generated-id': number;
  readonly text: string;
  readonly int64: bigint;
  readonly 'nullable-enum': (F extends { readonly values: readonly (infer V)[] } ? V : never) | null;
}[F['kind']];

export type PetRecord = { readonly [N in PetFieldName]: PetFieldValue<PetFields[N]> };

/** The fields a creator supplies. */
export type NewPetFieldName = {
  [N in PetFieldName]: PetFields[N]['kind'] extends SuppliedPetFieldKind ? N : never;
}[PetFieldName];

export type NewPetRecord = { readonly [N in NewPetFieldName]: PetRecord[N] };

/** A row of `PET_FIELDS`, for the layers that go through the fields one by one. */
export interface PetField {
  readonly name: PetFieldName;
  readonly kind: PetFieldKind;
  readonly column: PetColumn;
}

export interface NewPetField extends PetField {
  readonly name: NewPetFieldName;
  readonly kind: SuppliedPetFieldKind;
}

/** `PET_FIELDS` as a list, in wire order. */
export const PET_FIELD_LIST: readonly PetField[] = Object.freeze(
  (Object.keys(PET_FIELDS) as PetFieldName[]).map((name) => ({ name, ...PET_FIELDS[name] })),
);

/** The fields a creator supplies, in wire order. */
export const NEW_PET_FIELD_LIST: readonly NewPetField[] = Object.freeze(
  PET_FIELD_LIST.filter((field): field is NewPetField => field.kind !== 'generated-id'),
);
