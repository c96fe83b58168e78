export { PetstoreClient } from './petstore-client.ts';
export type { WithResponseApi } from './petstore-client.ts';
export { PetsApi, PetsWithResponseApi } from './pets-api.ts';
export type { CreateOptions, ListOptions, ListPageOptions, PetPage } from './pets-api.ts';
export type { UsageApi, UsageHistoryOptions, UsageWithResponseApi } from './usage-api.ts';
export { KeysApi, KeysWithResponseApi } from './keys-api.ts';
export type {
  KeyCreateError,
  KeyCreateOptions,
  KeyListOptions,
  KeyListPageOptions,
  KeyPage,
  KeyRollError,
  KeyRollOptions,
} from './keys-api.ts';
export type { PetstoreResponse } from './with-response.ts';
export type {
  CallOptions,
  EtagCacheOptions,
  PetstoreClientOptions,
  WaitInfo,
  WaitListener,
  WaitReason,
} from './options.ts';
export { PetstoreError, PetstoreTimeoutError, UNEXPECTED_RESPONSE } from './petstore-error.ts';
export type { PetstoreErrorCode, PetstoreErrorConstructor, PetstoreErrorDetails } from './petstore-error.ts';
export { DEPRECATION_WARNING_CODE, DEPRECATION_WARNING_TYPE } from './deprecation-warning.ts';
export { int64Replacer, int64Reviver } from './int64-json.ts';
export type { RateLimitState, RateLimitWindow } from './rate-limit.ts';
export type { Fetch, Sleep } from './transport.ts';
export type {
  CreatedKey,
  DeprecatedUsage,
  ErrorCode,
  Int64,
  Key,
  KeyScope,
  NewKey,
  NewPet,
  Pet,
  PetStatus,
  Usage,
  UsageGranularity,
  UsageHistory,
  UsagePoint,
  UsageWindow,
} from './types.ts';
export { CLIENT_VERSION } from './version.ts';
