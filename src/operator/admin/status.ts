import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../../auth/account-service.ts';
import type { ReadinessMonitor, ReadinessReading } from '../../readiness.ts';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from './admin-openapi.ts';
import { refs, type AdminStatus } from './admin-schemas.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'accounts' | 'backend' | 'readiness' | 'probeTimeoutMs'>;

/**
 * The instance and its dependencies. It answers while storage does not, with what is known: an
 * operator needs it most then (operator-auth.ts lets a recently verified token or session read it).
 */
export const statusRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    `${ADMIN_PREFIX}/status`,
    {
      schema: {
        operationId: 'getStatus',
        tags: ['operator'],
        summary: 'The instance and its dependencies',
        description:
          'Answers while storage does not: readiness from the last probe, and `accounts` and `activeBans` ' +
          'null with `countsUnavailable` saying why.',
        response: { 200: adminAnswer('Storage, Redis, and what storage holds.', refs.Status), ...adminErrors() },
      },
    },
    async (_request, reply) => reply.send(await statusOf(options)),
  );
};

async function statusOf(options: Needs): Promise<AdminStatus> {
  const reading = await readingOf(options.readiness);
  const answered = (name: string): boolean | undefined => reading.results.find((result) => result.name === name)?.ok;
  const redis = answered('redis');
  const counts =
    answered(options.backend) === true
      ? await countsOf(options.accounts, options.readiness)
      : {
          accounts: null,
          activeBans: null,
          countsUnavailable:
            `storage did not answer its last probe (at ${new Date(reading.at).toISOString()}) within ` +
            `${options.probeTimeoutMs} ms; accounts and bans in force are unknown until it answers`,
        };
  return {
    storage: { backend: options.backend, ready: answered(options.backend) ?? false },
    redis: redis === undefined ? null : { ready: redis },
    ...counts,
    checkedAt: new Date(reading.at).toISOString(),
  };
}

/**
 * A new probe while everything answered at the last one (it takes milliseconds then); the last
 * reading while something did not, so that the status never waits STORAGE_TIMEOUT_MS for a probe.
 */
async function readingOf(readiness: ReadinessMonitor): Promise<ReadinessReading> {
  const last = readiness.latest();
  if (last !== undefined && last.results.some((result) => !result.ok)) return last;
  return readiness.probe();
}

type Counts = Pick<AdminStatus, 'accounts' | 'activeBans' | 'countsUnavailable'>;

async function countsOf(accounts: AccountService, readiness: ReadinessMonitor): Promise<Counts> {
  let failure: unknown;
  const [accountCount, bans] = await Promise.all([
    accounts.countAccounts().catch((error: unknown) => {
      failure = error;
      return null;
    }),
    accounts.listActiveBans().catch((error: unknown) => {
      failure = error;
      return null;
    }),
  ]);
  if (failure === undefined)
    return { accounts: accountCount, activeBans: bans?.length ?? null, countsUnavailable: null };
  // Storage stopped answering since its last probe: the next reading should say so.
  void readiness.probe();
  const why = failure instanceof Error ? failure.message : String(failure);
  return {
    accounts: accountCount,
    activeBans: bans === null ? null : bans.length,
    countsUnavailable: `storage did not answer when counted: ${why}`,
  };
}
