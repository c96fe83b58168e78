/**
 * Estimates, in bytes, of what the in-process caches and counters hold, so each can be bounded in
 * bytes rather than in entries: an entry cap lets a few thousand entries with huge keys or values
 * take a gigabyte. The estimates err high: a string is counted at two bytes per UTF-16 unit (V8
 * stores Latin-1 strings in one), and every object, map entry and list node at a generous fixed
 * cost, so the accounted size bounds the real heap the structure keeps alive.
 */

/** An object with a handful of fields, plus its slot in a Map or cache. */
export const ENTRY_OVERHEAD_BYTES = 160;

/** Heap bytes of a string: two per UTF-16 code unit at most, plus its header. */
export function stringBytes(text: string): number {
  return 2 * text.length + 32;
}
