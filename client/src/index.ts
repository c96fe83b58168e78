export { PetstoreClient, PetsApi } from './petstore-client.ts';
export type {
  CallOptions,
  CreateOptions,
  ListOptions,
  ListPageOptions,
  PetPage,
  PetstoreClientOptions,
} from './petstore-client.ts';
export { PetstoreError, UNEXPECTED_RESPONSE } from './petstore-error.ts';
export { DEPRECATION_WARNING_CODE, DEPRECATION_WARNING_TYPE } from './deprecation-warning.ts';
export type { RateLimitState, RateLimitWindow } from './rate-limit.ts';
export type { Fetch, Sleep } from './transport.ts';
export type { ErrorCode, Int64, NewPet, Pet, PetStatus, Usage, UsageWindow } from './types.ts';
