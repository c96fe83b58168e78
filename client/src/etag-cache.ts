/** An answer kept by its strong ETag: sent again as If-None-Match, and given back on a 304. */
export interface KeptAnswer {
  readonly etag: string;
  /** The body's text, parsed again for every 304, so that no caller shares, or changes, another's objects. */
  readonly text: string;
  readonly headers: Headers;
}

/** What the client takes for `etagCache: true`. */
export const DEFAULT_ETAG_ENTRIES = 500;

/** A strong entity tag (RFC 9110 8.8.3): quoted, without the `W/` of a weak one. */
const STRONG_ETAG = /^"[\x21\x23-\x7e\x80-\xff]*"$/;

/** Whether an ETag field value is one strong tag. */
export function isStrongEtag(value: string | null): value is string {
  return value !== null && STRONG_ETAG.test(value);
}

/**
 * The answers kept by URL, at most `maxEntries`: a Map in insertion order, where a read moves an entry to the end,
 * so that the least recently used goes first. No dependency: the client runs in browsers as it is.
 */
export class EtagCache {
  private readonly entries = new Map<string, KeptAnswer>();
  private readonly maxEntries: number;

  constructor(maxEntries: number) {
    this.maxEntries = maxEntries;
  }

  get(url: string): KeptAnswer | undefined {
    const kept = this.entries.get(url);
    if (kept !== undefined) {
      this.entries.delete(url);
      this.entries.set(url, kept);
    }
    return kept;
  }

  set(url: string, kept: KeptAnswer): void {
    this.entries.delete(url);
    this.entries.set(url, kept);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  delete(url: string): void {
    this.entries.delete(url);
  }

  get size(): number {
    return this.entries.size;
  }
}
