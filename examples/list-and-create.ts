// Creates a pet idempotently, walks every available pet page by page, and prints the account's usage.
// Against `npm start`: PETSTORE_URL=http://127.0.0.1:8080/v1 PETSTORE_API_KEY=pst_… node examples/list-and-create.ts
import { PetstoreClient, PetstoreError } from '@petstore/client';

const apiKey = process.env.PETSTORE_API_KEY;
if (!apiKey) throw new Error('set PETSTORE_API_KEY to an API key (npm start prints one on an empty store)');
const client = new PetstoreClient({ baseUrl: process.env.PETSTORE_URL ?? 'http://127.0.0.1:8080/v1', apiKey });

try {
  // The same key on a later run returns the same pet instead of a second one.
  const idempotencyKey = crypto.randomUUID();
  const rex = await client.pets.create(
    { name: 'Rex', categoryId: 9007199254740993n, status: 'available' },
    { idempotencyKey },
  );
  console.log('created', rex);

  let count = 0;
  for await (const pet of client.pets.list({ status: 'available', limit: 50 })) {
    count += 1;
    if (count <= 5) console.log('available', pet.id, pet.name, pet.categoryId);
  }
  console.log(`${count} available pets; rate limit now`, client.rateLimit);
  console.log('usage', await client.usage());
} catch (error) {
  if (!(error instanceof PetstoreError)) throw error;
  console.error(`${error.status} ${error.code}: ${error.message} (request id ${error.requestId ?? 'none'})`);
  process.exitCode = 1;
}
