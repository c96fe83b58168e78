import type { WindowSpec, WindowState } from './limiter.ts';

/**
 * The rate-limit fields of a response. Written by hand on the hot path: five short strings per
 * response, built without intermediate arrays; the policy, fixed per account, is built once.
 */
export interface RateLimitFields {
  readonly 'x-ratelimit-limit': string;
  readonly 'x-ratelimit-remaining': string;
  readonly 'x-ratelimit-reset': string;
  readonly 'ratelimit-policy': string;
  readonly ratelimit: string;
}

/** The window with the fewest requests remaining; on a tie, the one that resets first. */
export function mostConstraining(windows: readonly WindowState[]): WindowState {
  let chosen = windows[0] as WindowState;
  for (const window of windows) {
    if (
      window.remaining < chosen.remaining ||
      (window.remaining === chosen.remaining && window.resetAt < chosen.resetAt)
    )
      chosen = window;
  }
  return chosen;
}

/** The RateLimit-Policy field of a set of windows: fixed per account, so built once and kept. */
export function policyField(windows: readonly WindowSpec[]): string {
  return windows.map((window) => `"${window.name}";q=${window.limit};w=${window.seconds}`).join(', ');
}

export function rateLimitFields(windows: readonly WindowState[], now: number, policy: string): RateLimitFields {
  const constraining = mostConstraining(windows);
  let state = '';
  for (let index = 0; index < windows.length; index += 1) {
    const window = windows[index] as WindowState;
    state += `${index === 0 ? '' : ', '}"${window.name}";r=${window.remaining};t=${secondsUntil(window.resetAt, now)}`;
  }
  return {
    'x-ratelimit-limit': String(constraining.limit),
    'x-ratelimit-remaining': String(constraining.remaining),
    'x-ratelimit-reset': String(Math.ceil(constraining.resetAt / 1000)),
    'ratelimit-policy': policy,
    ratelimit: state,
  };
}

/** Whole seconds until `instant`, at least 1 (Retry-After and `t` never say 0 while still blocked). */
export function secondsUntil(instant: number, now: number): number {
  return Math.max(1, Math.ceil((instant - now) / 1000));
}
