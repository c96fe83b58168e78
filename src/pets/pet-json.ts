import type { PetRecord } from '../domain/pet.ts';

/**
 * Hand-written serialisation of Pet, checked against the OpenAPI document by the contract test.
 * Two reasons: `categoryId` is a bigint that JSON.stringify refuses and a number would round past
 * 2^53, and concatenation is measurably faster than a generic serialiser on the list hot path.
 * `status` is one of three fixed words and `id` an integer, so only `name` needs escaping.
 */
export function petToJson(pet: PetRecord): string {
  const status = pet.status === null ? '' : `,"status":"${pet.status}"`;
  return `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId}${status}}`;
}

export function petsToJson(pets: readonly PetRecord[]): string {
  let out = '[';
  for (let i = 0; i < pets.length; i += 1) {
    if (i > 0) out += ',';
    out += petToJson(pets[i] as PetRecord);
  }
  return out + ']';
}
