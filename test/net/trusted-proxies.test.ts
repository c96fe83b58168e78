import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { clientAddressResolver, limitedNetworkOf, parseTrustedProxies } from '../../src/net/client-address.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { errorOf, request, type HttpAnswer } from '../support/http-client.ts';
import { redisBackend } from '../support/redis-backend.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestApp, type TestApp, type TestAppOptions } from '../support/test-app.ts';
import { assertRefused, MID, rateLimitOf } from '../ratelimit/rate-limit-assertions.ts';

/**
 * TRUST_PROXY names the proxies in front of the service (docs/operations.md, "Several instances"):
 * the client is the rightmost X-Forwarded-For address that is not a trusted proxy, so what a
 * client writes into the header itself cannot buy it a fresh per-address window. The test client
 * connects from 127.0.0.1 and plays the proxy; requests carry no key, so they count per address.
 */

const LIMIT = 3;

async function withApp(options: TestAppOptions, run: (app: TestApp) => Promise<void>): Promise<void> {
  const app = await startTestApp({ ...options, clock: new ManualClock(MID) });
  try {
    await run(app);
  } finally {
    await app.close();
  }
}

/** A request without a key, as forwarded with this X-Forwarded-For (undefined: no header). */
function forwarded(app: TestApp, forwardedFor?: string): Promise<HttpAnswer> {
  return request(app, '/v1/pets', forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } });
}

/** What is left of the per-address window each answer was counted in. */
async function remainingAfter(app: TestApp, chains: readonly (string | undefined)[]): Promise<number[]> {
  const left: number[] = [];
  for (const chain of chains) {
    const answer = await forwarded(app, chain);
    assert.equal(answer.status, 401, `${String(chain)}: ${answer.text}`);
    left.push(rateLimitOf(answer).remaining);
  }
  return left;
}

describeEachBackend('TRUST_PROXY: the client address behind trusted proxies', (backend) => {
  const env = (trustProxy: string): TestAppOptions => ({
    backend,
    env: { ANON_LIMIT_PER_MINUTE: String(LIMIT), TRUST_PROXY: trustProxy },
  });

  it('a spoofed leftmost entry does not get a fresh window (nginx appends the address it saw)', async () => {
    await withApp(env('127.0.0.1'), async (app) => {
      assert.deepEqual(
        await remainingAfter(app, ['9.9.9.9, 10.0.0.1', '9.9.9.9, 10.0.0.1', '9.9.9.9, 10.0.0.1']),
        [2, 1, 0],
      );
      assertRefused(await forwarded(app, '9.9.9.9, 10.0.0.1'), 'rate_limited');
      assertRefused(await forwarded(app, '8.8.8.8, 10.0.0.1'), 'rate_limited');
      assertRefused(await forwarded(app, '10.0.0.1'), 'rate_limited');
      // Another client behind the same proxy has a window of its own, and so has the proxy itself.
      assert.deepEqual(await remainingAfter(app, ['8.8.8.8, 10.0.0.2', undefined]), [2, 2]);
    });
  });

  it('trusts a chain of proxies named by CIDR range, IPv4 and IPv6', async () => {
    await withApp(env('127.0.0.1, 10.0.0.0/8, 2001:db8:aa::/48'), async (app) => {
      const left = await remainingAfter(app, [
        '9.9.9.9, 10.0.0.1',
        '7.7.7.7, 9.9.9.9, 10.20.30.40',
        '9.9.9.9, 2001:db8:aa:1::5, 10.0.0.3',
        '8.8.8.8, 10.0.0.1',
        '9.9.9.9, 11.0.0.1',
      ]);
      // 9.9.9.9 three times (whatever stands left of it), 8.8.8.8 once, then 11.0.0.1 (not a proxy).
      assert.deepEqual(left, [2, 1, 0, 2, 2]);
    });
  });

  it('a number of hops trusts that many hops, the TCP peer being the first', async () => {
    await withApp(env('2'), async (app) => {
      const left = await remainingAfter(app, [
        '9.9.9.9, 203.0.113.5, 10.0.0.1',
        '8.8.8.8, 203.0.113.5, 10.0.0.2',
        '203.0.113.5, 10.0.0.3',
        '203.0.113.6, 10.0.0.1',
      ]);
      assert.deepEqual(left, [2, 1, 0, 2]);
      assertRefused(await forwarded(app, '1.1.1.1, 203.0.113.5, 10.9.9.9'), 'rate_limited');
    });
  });

  it('normalises addresses: IPv6 spellings and IPv4-mapped IPv6 share a window', async () => {
    await withApp(env('127.0.0.1'), async (app) => {
      const left = await remainingAfter(app, [
        '2001:DB8:0:0:0:0:0:1',
        '2001:db8::1',
        '2001:0db8:0::0001',
        '::ffff:203.0.113.9',
        '203.0.113.9',
        '::FFFF:CB00:7109',
      ]);
      assert.deepEqual(left, [2, 1, 0, 2, 1, 0]);
    });
  });

  it('counts an IPv6 client by its /64: rotated addresses share a window, the next /64 has its own', async () => {
    await withApp(env('127.0.0.1'), async (app) => {
      // A host holding 2001:db8:1:2::/64 sends each request from another of its addresses.
      const left = await remainingAfter(app, [
        '2001:db8:1:2::1',
        '2001:db8:1:2:ffff:ffff:ffff:fffe',
        '2001:db8:1:2:a:b:c:d',
      ]);
      assert.deepEqual(left, [2, 1, 0]);
      for (const rotated of ['2001:db8:1:2::7', '2001:DB8:1:2:1234::5', '2001:db8:1:2:8000::']) {
        const refused = await forwarded(app, `9.9.9.9, ${rotated}`);
        assertRefused(refused, 'rate_limited');
        assert.match(errorOf(refused).message, /per client network \(IPv6 \/64\)/);
      }
      // The neighbouring /64s, and an IPv4 client, are other clients.
      const others = ['2001:db8:1:3::1', '2001:db8:1:1:ffff:ffff:ffff:ffff', '2001:db8:1:3::2', '203.0.113.9'];
      assert.deepEqual(await remainingAfter(app, others), [2, 2, 1, 2]);
    });
  });

  it('IPV6_LIMIT_PREFIX sets the network: 48 counts a site as one client, 128 every address apart', async () => {
    await withApp({ backend, env: { ...env('127.0.0.1').env, IPV6_LIMIT_PREFIX: '48' } }, async (app) => {
      assert.deepEqual(
        await remainingAfter(app, ['2001:db8:1:2::1', '2001:db8:1:ffff::1', '2001:db8:2::1']),
        [2, 1, 2],
      );
    });
    await withApp({ backend, env: { ...env('127.0.0.1').env, IPV6_LIMIT_PREFIX: '128' } }, async (app) => {
      assert.deepEqual(await remainingAfter(app, ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2::1']), [2, 2, 1]);
    });
  });

  if (backend.name === 'postgres') {
    it("counts the network in Redis under the network's own hash tag, in its canonical form", async () => {
      await withApp(env('127.0.0.1'), async (app) => {
        await remainingAfter(app, ['2001:DB8:1:2:0:0:0:9', '2001:db8:1:2::a', '::ffff:203.0.113.9']);
        const redis = await redisBackend();
        try {
          const keys = await redis.client().keys(`${app.services.config.redisPrefix}*`);
          const tags = keys.map((key) => /\{([^}]*)\}/.exec(key)?.[1]).sort();
          assert.deepEqual(tags, ['address:2001:db8:1:2::/64', 'address:203.0.113.9']);
        } finally {
          await redis.cleanup();
        }
      });
    });
  }

  it('garbage where the client should be counts as the connecting peer', async () => {
    await withApp(env('127.0.0.1'), async (app) => {
      const left = await remainingAfter(app, ['not-an-address', '9.9.9.9, 203.0.113.1:4711', '[2001:db8::1]']);
      assert.deepEqual(left, [2, 1, 0]);
      assertRefused(await forwarded(app), 'rate_limited');
      assert.deepEqual(await remainingAfter(app, ['203.0.113.1']), [2], 'a well-formed address has its own window');
    });
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    await withApp(env('10.0.0.1'), async (app) => {
      assert.deepEqual(await remainingAfter(app, ['9.9.9.9', '8.8.8.8, 10.0.0.1', undefined]), [2, 1, 0]);
    });
  });
});

describe('TRUST_PROXY: the client address of one request', () => {
  it('normalises the TCP peer too: an IPv4-mapped peer matches an IPv4 proxy', () => {
    const clientOf = clientAddressResolver(parseTrustedProxies('127.0.0.1'));
    assert.equal(clientOf('::ffff:127.0.0.1', '203.0.113.7'), '203.0.113.7');
    assert.equal(clientOf('::ffff:198.51.100.1', '203.0.113.7'), '198.51.100.1', 'an untrusted peer is the client');
    assert.equal(clientOf('2001:DB8::0:1', '203.0.113.7'), '2001:db8::1');
  });

  it('takes the farthest address when every hop is trusted', () => {
    const everyHop = parseTrustedProxies('10.0.0.0/8, 5.6.7.8, 1.2.3.4');
    assert.equal(clientAddressResolver(everyHop)('10.0.0.1', '1.2.3.4, 5.6.7.8'), '1.2.3.4');
    assert.equal(clientAddressResolver(parseTrustedProxies('5'))('10.0.0.1', '1.2.3.4, 5.6.7.8'), '1.2.3.4');
  });

  it('joins repeated X-Forwarded-For headers in order', () => {
    const clientOf = clientAddressResolver(parseTrustedProxies('127.0.0.1, 10.0.0.0/8'));
    assert.equal(clientOf('127.0.0.1', ['9.9.9.9', '10.0.0.1']), '9.9.9.9');
  });

  it('without trusted proxies, is always the peer', () => {
    const clientOf = clientAddressResolver(parseTrustedProxies(undefined));
    assert.equal(clientOf('127.0.0.1', '9.9.9.9'), '127.0.0.1');
  });
});

describe('IPV6_LIMIT_PREFIX: the network a client address is counted under', () => {
  it('an IPv4 address by itself, an IPv6 one by its network, in canonical form', () => {
    const cases: ReadonlyArray<readonly [address: string, prefix: number, counted: string]> = [
      ['203.0.113.9', 64, '203.0.113.9'],
      ['::ffff:203.0.113.9', 64, '203.0.113.9'],
      ['::FFFF:CB00:7109', 32, '203.0.113.9'],
      ['2001:DB8:1:2:AAAA:0:0:1', 64, '2001:db8:1:2::/64'],
      ['2001:db8:0:0:1::1', 64, '2001:db8::/64'],
      ['2001:db8:1:2:3::', 48, '2001:db8:1::/48'],
      ['2001:db8:ffff:ffff::1', 33, '2001:db8:8000::/33'],
      ['2001:db8:1:2:3:4:5:7', 127, '2001:db8:1:2:3:4:5:6/127'],
      ['2001:DB8:0::1', 128, '2001:db8::1'],
      ['::1', 64, '::/64'],
      // No address at all: kept, as the client address resolver gives it.
      ['unknown', 64, 'unknown'],
      ['fe80::1%eth0', 64, 'fe80::1%eth0'],
    ];
    for (const [address, prefix, counted] of cases) assert.equal(limitedNetworkOf(address, prefix), counted, address);
  });

  it('is 64 unless set; 32 to 128, else start-up stops with one line naming it', () => {
    assert.equal(loadConfig({}).ipv6LimitPrefix, 64);
    for (const value of ['32', '56', '128'])
      assert.equal(loadConfig({ IPV6_LIMIT_PREFIX: value }).ipv6LimitPrefix, Number(value));
    for (const value of ['31', '0', '129', '-64', '64.5', '/64', 'sixty-four']) {
      assert.throws(
        () => loadConfig({ IPV6_LIMIT_PREFIX: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          /^invalid configuration: IPV6_LIMIT_PREFIX [^\n]+$/.test(error.message) &&
          error.message.includes(JSON.stringify(value)),
        value,
      );
    }
  });
});

describe('TRUST_PROXY: validated at start-up', () => {
  const load = (value: string) => loadConfig({ TRUST_PROXY: value });

  /** Start-up refuses `value` with a ConfigError matching `message` that also speaks of hops. */
  function assertRefusedForHops(value: string, message: RegExp): void {
    assert.throws(
      () => load(value),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        assert.match(error.message, /hops/);
        return true;
      },
    );
  }

  for (const old of ['true', '1']) {
    it(`refuses the old ${old} with one line saying what to write instead`, () => {
      assertRefusedForHops(old, /^invalid configuration: TRUST_PROXY [^\n]*name the proxies/);
    });
  }

  for (const everyone of [
    '0.0.0.0/0',
    '::/0',
    '10.0.0.1, ::/0',
    '0.0.0.0/1, 128.0.0.0/1',
    '10.0.0.0/7',
    '2000::/3',
    '2001::/15',
  ]) {
    it(`refuses ${JSON.stringify(everyone)}, which trusts (nearly) every hop, like true`, () => {
      assertRefusedForHops(
        everyone,
        /^invalid configuration: TRUST_PROXY [^\n]*wider than \/(8|16)[^\n]*name the proxies/,
      );
    });
  }

  it('accepts the widest ranges it trusts: an IPv4 /8 and an IPv6 /16', () => {
    assert.deepEqual(load('10.0.0.0/8, 2001::/16').trustProxy, { kind: 'list', entries: ['10.0.0.0/8', '2001::/16'] });
  });

  it('names the value once in each refusal', () => {
    const messages: Array<[string, string]> = [
      ['999', 'invalid configuration: TRUST_PROXY counts at most 64 hops (got "999")'],
      [
        'proxy.internal',
        'invalid configuration: TRUST_PROXY has an entry that is not an IP address or CIDR range ' +
          '(got "proxy.internal")',
      ],
      [
        '10.0.0.1, 10.0.0.0/33',
        'invalid configuration: TRUST_PROXY has a CIDR prefix outside 0-32 ' +
          '(got "10.0.0.0/33" in "10.0.0.1, 10.0.0.0/33")',
      ],
    ];
    for (const [value, message] of messages) assert.throws(() => load(value), { message });
    for (const value of ['true', '1', '0.0.0.0/0', '10.0.0.1,']) {
      assert.throws(
        () => load(value),
        (error: unknown) => error instanceof Error && error.message.split(JSON.stringify(value)).length === 2,
      );
    }
  });

  for (const bad of ['10.0.0.0/33', '10.0.0.256', 'fe80::/129', '10.0.0.1,', 'proxy.internal', '10.0.0.0/8/8', '-2']) {
    it(`refuses ${JSON.stringify(bad)} naming TRUST_PROXY`, () => {
      assert.throws(
        () => load(bad),
        (error: unknown) =>
          error instanceof ConfigError && /^invalid configuration: TRUST_PROXY [^\n]+$/.test(error.message),
      );
    });
  }

  it('accepts addresses, ranges and hop counts; unset, false and 0 trust no proxy', () => {
    assert.deepEqual(load(' 10.0.0.5 , 2001:DB8::/32,::ffff:10.0.0.6 ').trustProxy, {
      kind: 'list',
      entries: ['10.0.0.5', '2001:db8::/32', '10.0.0.6'],
    });
    assert.deepEqual(load('3').trustProxy, { kind: 'hops', hops: 3 });
    for (const none of ['', 'false', '0']) assert.deepEqual(load(none).trustProxy, { kind: 'none' });
    assert.deepEqual(loadConfig({}).trustProxy, { kind: 'none' });
  });
});
