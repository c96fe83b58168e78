import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe, it } from 'node:test';
import { OUTAGE_TRUST_MS, RememberedVerifications } from '../../src/operator/remembered-verifications.ts';
import type { OperatorTokenRecord } from '../../src/domain/operator-tokens.ts';
import { ManualClock } from '../support/manual-clock.ts';

/**
 * What the operator listener remembers of the credentials storage accepted, for reads of the
 * instance's state while storage does not answer (docs/operations.md, "While storage does not
 * answer"): trusted for OUTAGE_TRUST_MS after the last acceptance, never the credential itself.
 */
const START = Date.UTC(2026, 5, 1, 12);
const TOKEN = 'pso_AAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const RECORD: OperatorTokenRecord = {
  id: 'AAAAAAAAAAAAAAAA',
  name: 'alice',
  createdAt: START,
  revokedAt: null,
  lastUsedAt: null,
};

describe('RememberedVerifications', () => {
  it('trusts a verification for OUTAGE_TRUST_MS from the last one, then no more', () => {
    const clock = new ManualClock(START);
    const remembered = new RememberedVerifications(clock);
    assert.equal(remembered.recall('token', TOKEN), undefined, 'nothing before storage accepted it');
    remembered.remember('token', TOKEN, RECORD);
    clock.advance(OUTAGE_TRUST_MS - 1);
    assert.deepEqual(remembered.recall('token', TOKEN), RECORD);
    // Verified again: the time counts from there.
    remembered.remember('token', TOKEN, RECORD);
    clock.advance(OUTAGE_TRUST_MS - 1);
    assert.deepEqual(remembered.recall('token', TOKEN), RECORD);
    clock.advance(1);
    assert.equal(remembered.recall('token', TOKEN), undefined);
  });

  it('keeps tokens and sessions apart, forgets on a refusal, and a clock set back trusts nothing', () => {
    const clock = new ManualClock(START);
    const remembered = new RememberedVerifications(clock);
    remembered.remember('session', TOKEN, RECORD);
    assert.equal(remembered.recall('token', TOKEN), undefined, 'a session id is no token');
    remembered.remember('token', TOKEN, RECORD);
    remembered.forget('token', TOKEN);
    assert.equal(remembered.recall('token', TOKEN), undefined);
    assert.deepEqual(remembered.recall('session', TOKEN), RECORD);
    clock.set(START - 1);
    assert.equal(remembered.recall('session', TOKEN), undefined);
  });

  it('holds hashes, never the credential, and drops what it no longer trusts', () => {
    const clock = new ManualClock(START);
    const remembered = new RememberedVerifications(clock);
    for (let i = 0; i < 100; i += 1) remembered.remember('session', `session-${i}`, RECORD);
    remembered.remember('token', TOKEN, RECORD);
    assert.doesNotMatch(inspect(remembered, { depth: 5 }), /BBBBBBBB|session-\d/);
    clock.advance(OUTAGE_TRUST_MS);
    remembered.remember('token', TOKEN, RECORD);
    assert.equal(remembered.size, 1, 'the sessions no longer trusted are gone');
  });
});
