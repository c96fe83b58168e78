// Creates a pet idempotently, walks every available pet page by page, and prints the account's usage.
// Against `npm start`, from the repository root: `npm run example`, which runs it on the Node 24 of `npm ci` with
// --conditions=@petstore/source (so Node runs the client's TypeScript source), with these set:
//   export PETSTORE_URL=http://127.0.0.1:8080/v1 PETSTORE_API_KEY=pst_…
import { int64Replacer, PetstoreClient, PetstoreError } from '@petstore/client';

const apiKey = process.env.PETSTORE_API_KEY;
if (!apiKey) throw new Error('set PETSTORE_API_KEY to an API key (npm start prints one on an empty store)');
const client = new PetstoreClient({
  baseUrl: process.env.PETSTORE_URL ?? 'http://127.0.0.1:8080/v1',
  apiKey,
  userAgent: 'list-and-create-example',
  timeoutMs: 120_000,
  // The free plan allows 60 requests a minute: a long walk waits for the next minute rather than be refused.
  onRateLimit: (wait) => console.log(`rate limit: waiting ${Math.ceil(wait.delayMs / 1000)} s (${wait.reason})`),
  onRetry: (wait) => console.log(`retry ${wait.attempt - 1} in ${Math.round(wait.delayMs)} ms (${wait.reason})`),
});

try {
  // Every retry of this call sends the same key, so a creation whose answer was lost is not made twice.
  const idempotencyKey = crypto.randomUUID();
  const rex = await client.pets.create(
    { name: 'Rex', categoryId: 9007199254740993n, status: 'available' },
    { idempotencyKey },
  );
  console.log('created', JSON.stringify(rex, int64Replacer));

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
