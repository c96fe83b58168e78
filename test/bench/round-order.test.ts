import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { roundOrder } from '../../bench/round-order.ts';

describe('bench: the order of the targets in a round', () => {
  const targets = ['bare', 'express', 'baseline', 'current'];
  const rounds = [1, 2, 3, 4].map((round) => roundOrder(targets, round));

  it('measures every target once a round', () => {
    for (const order of rounds) assert.deepEqual([...order].sort(), [...targets].sort());
  });

  it('measures no target first, nor last, in every round', () => {
    assert.ok(new Set(rounds.map((order) => order[0])).size > 1, 'not always the same first');
    assert.ok(new Set(rounds.map((order) => order.at(-1))).size > 1, 'not always the same last');
  });

  it('runs every two targets in both orders in each pair of rounds', () => {
    for (const pair of [rounds.slice(0, 2), rounds.slice(2, 4)]) {
      for (const first of targets) {
        for (const second of targets) {
          if (first === second) continue;
          const before = pair.map((order) => order.indexOf(first) < order.indexOf(second));
          assert.deepEqual(new Set(before), new Set([true, false]), `${first} and ${second}`);
        }
      }
    }
  });
});
