// Rolls a key as after a leak: creates a key for a service (as if it had been in use), rolls it into a new one
// with the same name and scopes, and revokes the old one once the new one is "deployed".
// It needs a key that holds keys:manage, which the operator gives by name, e.g.:
//   npm run -s petstore -- key create --account demo --scopes pets:read,keys:manage | tail -n 1
// Against `npm start`, from the repository root: `npm run example:roll`, with these set:
//   export PETSTORE_URL=http://127.0.0.1:8080/v1 PETSTORE_API_KEY=pst_…   # the key that holds keys:manage
import { PetstoreClient, PetstoreError } from '@petstore/client';

const apiKey = process.env.PETSTORE_API_KEY;
if (!apiKey) throw new Error('set PETSTORE_API_KEY to a key that holds keys:manage');
const baseUrl = process.env.PETSTORE_URL ?? 'http://127.0.0.1:8080/v1';
const admin = new PetstoreClient({ baseUrl, apiKey, userAgent: 'roll-key-example' });

try {
  // The key a service uses: read-only, named so the listing tells it apart.
  const leaked = await admin.keys.create({ name: 'inventory-service', scopes: ['pets:read'] });
  console.log('created', leaked.id, leaked.name, leaked.scopes.join(','));

  // It leaked: roll it. The old key keeps working for an hour, time enough to deploy the new one.
  const fresh = await admin.keys.roll(leaked.id, { gracePeriodSeconds: 3600 });
  console.log('rolled', leaked.id, 'into', fresh.id, fresh.name, fresh.scopes.join(','));

  // "Deploy" the new key: the service's calls now use it.
  const service = new PetstoreClient({ baseUrl, apiKey: fresh.key, userAgent: 'inventory-service' });
  const page = await service.pets.listPage({ limit: 1 });
  console.log('the new key works:', page.pets.length <= 1);

  // Deployed everywhere: revoke the old key rather than wait for the end of its grace period.
  const revoked = await admin.keys.revoke(leaked.id);
  console.log('revoked', revoked.id, 'at', revoked.revokedAt);

  for await (const key of admin.keys.list()) {
    const state = key.revokedAt !== null ? 'revoked' : key.expiresAt === null ? 'active' : `expires ${key.expiresAt}`;
    console.log('key', key.id, key.name ?? '(no name)', state);
  }
} catch (error) {
  if (!(error instanceof PetstoreError)) throw error;
  console.error(`${error.status} ${error.code}: ${error.message} (request id ${error.requestId ?? 'none'})`);
  process.exitCode = 1;
}
