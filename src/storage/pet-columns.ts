import type { Insertable, Selectable } from 'kysely';
import {
  NEW_PET_FIELD_LIST,
  PET_FIELD_LIST,
  type NewPetRecord,
  type PetColumn,
  type PetFieldKind,
  type PetFieldKinds,
  type PetRecord,
  type SuppliedPetFieldKind,
} from '../domain/pet.ts';
import type { IntegerValue, PetsTable } from './database-schema.ts';

/**
 * The `pets` columns of the Pet's fields (src/domain/pet.ts), and how a record becomes a row and back,
 * on both backends.
 */

export const PET_COLUMNS: readonly PetColumn[] = Object.freeze(PET_FIELD_LIST.map((field) => field.column));

export type PetRow = Pick<Selectable<PetsTable>, PetColumn>;

/** What each kind of column selects as: integers as the driver reads them (database-schema.ts). */
interface PetColumnValues {
  readonly 'generated-id': IntegerValue;
  readonly text: string;
  readonly int64: IntegerValue;
  readonly 'nullable-enum': string | null;
}

type ColumnValue = PetColumnValues[PetFieldKind];

/** BigInt() of the driver's decimal string or exact bigint keeps an int64 digit for digit. */
const READERS: { readonly [K in PetFieldKind]: (value: PetColumnValues[K]) => PetFieldKinds[K] } = {
  'generated-id': Number,
  text: (value) => value,
  int64: BigInt,
  'nullable-enum': (value) => value,
};

type ColumnReader = (value: ColumnValue) => PetFieldKinds[PetFieldKind];

const READ_FIELDS = PET_FIELD_LIST.map((field) => ({
  name: field.name,
  column: field.column,
  read: READERS[field.kind] as ColumnReader,
}));

/** The record of a row read from `pets`: each field by its kind's reader. */
export function toPet(row: PetRow): PetRecord {
  const pet: Record<string, PetFieldKinds[PetFieldKind]> = {};
  for (const field of READ_FIELDS) pet[field.name] = field.read(row[field.column]);
  return pet as PetRecord;
}

/** What a column is given: Kysely sends an int64 as a bigint to both drivers. */
type ColumnInput = string | number | bigint | null;

/** How each kind of supplied field is written to its column. */
const WRITERS: { readonly [K in SuppliedPetFieldKind]: (value: PetFieldKinds[K]) => ColumnInput } = {
  text: (value) => value,
  int64: (value) => value,
  'nullable-enum': (value) => value,
};

type ColumnWriter = (value: PetFieldKinds[SuppliedPetFieldKind]) => ColumnInput;

const WRITTEN_FIELDS = NEW_PET_FIELD_LIST.map((field) => ({
  name: field.name,
  column: field.column,
  write: WRITERS[field.kind] as ColumnWriter,
}));

/** The row of a new pet: a column per supplied field, and its creation time. */
export function petRowOf(pet: NewPetRecord, now: number): Insertable<PetsTable> {
  const row: Record<string, ColumnInput> = {};
  for (const field of WRITTEN_FIELDS) row[field.column] = field.write(pet[field.name]);
  row['created_at'] = now;
  return row as Insertable<PetsTable>;
}
