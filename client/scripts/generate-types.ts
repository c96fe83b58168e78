import { writeFileSync } from 'node:fs';
import { GENERATED_TYPES_PATH, generatedTypesSource } from './openapi-types.ts';

// Run from the repository root (npm run client:generate does): the output path is relative to it.
writeFileSync(GENERATED_TYPES_PATH, await generatedTypesSource());
console.log(`wrote ${GENERATED_TYPES_PATH}`);
