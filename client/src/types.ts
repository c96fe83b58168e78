import type { components } from './generated/openapi.ts';

type Schemas = components['schemas'];

/** An int64: a number while it is a safe integer, a bigint beyond 2^53 so that no digit is lost. */
export type Int64 = number | bigint;

export type PetStatus = NonNullable<Schemas['Pet']['status']>;

/** A pet as the service answers it; `categoryId` keeps every digit (see Int64). */
export type Pet = Omit<Schemas['Pet'], 'categoryId'> & { readonly categoryId: Int64 };

/** The body of a creation; `categoryId` may be a number or a bigint and is sent with its exact digits. */
export type NewPet = Omit<Schemas['NewPet'], 'categoryId'> & { readonly categoryId: Int64 };

/** The stable error codes of the service. */
export type ErrorCode = Schemas['Error']['code'];

/** The answer of `GET /v1/usage`: the account, both windows (reset in Unix seconds) and the key's state. */
export type Usage = Schemas['Usage'];

/** One window of a usage answer. */
export type UsageWindow = Usage['windows']['minute'];
