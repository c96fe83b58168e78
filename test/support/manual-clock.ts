import type { Clock } from '../../src/clock.ts';

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
