import { Type, type Static, type TSchema } from 'typebox';
import { PET_STATUSES, type NewPetFieldName, type PetFieldName, type PetStatus } from '../domain/pet.ts';

/**
 * The shapes of v1, written once. They validate requests (src/http/validation.ts), type the
 * handlers, and are the OpenAPI document's components. `x-expectation` is the phrase error messages
 * use to say what a valid value looks like. `examples` are the reference page's sample values:
 * without them it makes up values, random strings from the name pattern among them. `cursor` has
 * none on purpose: a made-up cursor is no example of anything. NewPet and Pet have a property per
 * field of the Pet (src/domain/pet.ts), or fail to compile.
 */
const STATUS_EXPECTATION = `one of ${PET_STATUSES.join(', ')}`;

export const PetStatusSchema = Type.Enum(PET_STATUSES, {
  $id: 'PetStatus',
  type: 'string',
  description: 'Availability of a pet.',
  examples: ['available'],
  'x-expectation': STATUS_EXPECTATION,
});

/**
 * Where a field or parameter is a status. Validation messages read `x-expectation` from the field
 * itself, so the reference carries it too; the document keeps only the `$ref`.
 */
const PetStatusRef = Type.Unsafe<PetStatus>(Type.Ref('PetStatus', { 'x-expectation': STATUS_EXPECTATION }));

const Int64 = (description: string) =>
  Type.Integer({
    format: 'int64',
    description,
    examples: [3],
    'x-expectation': 'an integer from -9223372036854775808 to 9223372036854775807',
  });

const PetName = Type.String({
  minLength: 1,
  maxLength: 200,
  // Unicode-mode pattern: also refuses lone surrogates, which storage would turn into U+FFFD.
  pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$',
  description: "The animal's name: 1 to 200 characters, no control characters.",
  examples: ['Rex'],
  'x-expectation': 'a string of 1 to 200 characters without control characters or lone surrogates',
});

export const NewPetSchema = Type.Object(
  {
    name: PetName,
    categoryId: Int64('Category of the animal. Any int64; values beyond 2^53 are kept digit for digit.'),
    status: Type.Optional(PetStatusRef),
  } satisfies Record<NewPetFieldName, TSchema>,
  {
    $id: 'NewPet',
    additionalProperties: false,
    description: 'Body of createPet. Any other field, `id` included, is refused.',
  },
);

export const PetSchema = Type.Object(
  {
    id: Type.Integer({ format: 'int64', minimum: 1, description: 'Assigned by the service; positive and increasing.' }),
    name: PetName,
    categoryId: Int64('Category of the animal.'),
    status: Type.Optional(PetStatusRef),
  } satisfies Record<PetFieldName, TSchema>,
  {
    $id: 'Pet',
    additionalProperties: false,
    description: 'A pet. `status` is absent when the pet was created without one.',
  },
);

export type Pet = Static<typeof PetSchema>;

/**
 * Route schemas name the shared shapes by `$ref`, so the document shows them once as components;
 * `Unsafe` keeps each shape's static type on the reference for the handlers' types.
 */
export const PetRef = Type.Unsafe<Pet>(Type.Ref('Pet'));

export const PetsSchema = Type.Array(PetRef, {
  $id: 'Pets',
  description: 'A page of pets in ascending id order.',
});

/** A page's size: the bounds validate `limit`, and its description states them for the reference page. */
const PAGE_LIMIT = { minimum: 1, maximum: 100, default: 20 } as const;
const PAGE_LIMIT_RANGE = `from ${PAGE_LIMIT.minimum} to ${PAGE_LIMIT.maximum}`;

export const ListPetsQuerySchema = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      ...PAGE_LIMIT,
      description: `Most pets to return, ${PAGE_LIMIT_RANGE}; ${PAGE_LIMIT.default} when absent.`,
      'x-expectation': `an integer ${PAGE_LIMIT_RANGE}`,
    }),
  ),
  status: Type.Optional(PetStatusRef),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'Opaque position from the `next` link of the previous page.',
      'x-expectation': 'the opaque cursor of a Link rel="next" header',
    }),
  ),
});

export const PetIdParamsSchema = Type.Object({
  petId: Type.Integer({
    format: 'int64',
    description: 'Identifier of the pet.',
    examples: [42],
    'x-expectation': 'an int64 integer',
  }),
});

export const sharedSchemas = [PetStatusSchema, NewPetSchema, PetSchema, PetsSchema] as const;

export type NewPetBody = Static<typeof NewPetSchema>;
export const NewPetRef = Type.Unsafe<NewPetBody>(Type.Ref('NewPet'));
export const PetsRef = Type.Unsafe<Pet[]>(Type.Ref('Pets'));
export type ListPetsQuery = Static<typeof ListPetsQuerySchema>;
export type PetIdParams = Static<typeof PetIdParamsSchema>;
