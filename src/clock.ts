/** Time source injected everywhere time matters, so tests can stand on any instant. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: number | Date) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }
  now(): number {
    return this.current;
  }
  set(instant: number | Date): void {
    this.current = typeof instant === 'number' ? instant : instant.getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
