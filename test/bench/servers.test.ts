import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startBare } from '../../bench/servers.ts';

describe('bench servers', () => {
  it('reads a child server’s CPU time from the system, growing as it answers', async () => {
    const server = await startBare({
      'GET /x': { status: 200, base64: Buffer.from('{}').toString('base64'), contentEncoding: undefined },
    });
    try {
      const before = server.cpuSeconds();
      assert.ok(before !== undefined && before > 0, `CPU time after start-up: ${before}`);
      const deadline = Date.now() + 20_000;
      let after = before;
      // Enough requests to spend several of the kernel's 10 ms ticks.
      while (after === before && Date.now() < deadline) {
        await Promise.all(Array.from({ length: 200 }, () => fetch(`${server.url}/x`).then((answer) => answer.text())));
        after = server.cpuSeconds() ?? before;
      }
      assert.ok(after > before, `CPU time went from ${before} to ${after}`);
    } finally {
      await server.stop();
    }
  });
});
