/** One window of the `RateLimit` / `RateLimit-Policy` fields (IETF draft "RateLimit header fields for HTTP"). */
export interface RateLimitWindow {
  /** The policy's name, e.g. `minute` or `day`. */
  readonly name: string;
  /** The window's quota (`q` of `RateLimit-Policy`), when the policy was given. */
  readonly limit: number | undefined;
  /** Requests left in the window (`r`). */
  readonly remaining: number;
  /** Seconds until the window resets (`t`). */
  readonly resetSeconds: number;
}

/** The rate-limit state told by the last response that carried it. */
export interface RateLimitState {
  /** `X-RateLimit-Limit`: the quota of the most constraining window. */
  readonly limit: number;
  /** `X-RateLimit-Remaining`. */
  readonly remaining: number;
  /** `X-RateLimit-Reset`: Unix time, in seconds, when that window resets. */
  readonly reset: number;
  readonly windows: readonly RateLimitWindow[];
}

interface ListMember {
  readonly name: string;
  readonly params: ReadonlyMap<string, string>;
}

/** Splits on the commas and semicolons outside quoted strings. */
function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] ?? '';
    if (char === '\\' && quoted) {
      current += char + (text[i + 1] ?? '');
      i += 1;
      continue;
    }
    if (char === '"') quoted = !quoted;
    if (char === separator && !quoted) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

function unquote(text: string): string {
  return text.startsWith('"') && text.endsWith('"') && text.length >= 2
    ? text.slice(1, -1).replace(/\\(.)/g, '$1')
    : text;
}

/** A structured-field list (RFC 9651) of named items with parameters, as both draft fields are written. */
function parseList(field: string | null): ListMember[] {
  if (field === null) return [];
  return splitOutsideQuotes(field, ',').map((member) => {
    const [item = '', ...params] = splitOutsideQuotes(member, ';');
    const entries = params.map((param): [string, string] => {
      const equals = param.indexOf('=');
      return equals < 0 ? [param, '?1'] : [param.slice(0, equals).trim(), unquote(param.slice(equals + 1).trim())];
    });
    return { name: unquote(item), params: new Map(entries) };
  });
}

function integerOf(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined || !/^\s*-?\d+\s*$/.test(text)) return undefined;
  return Number(text);
}

/** One window of `RateLimit-Policy`: its quota (`q`) and length in seconds (`w`), where given. */
export interface WindowPolicy {
  readonly limit: number | undefined;
  readonly seconds: number | undefined;
}

/** The windows of `RateLimit-Policy`, by name. */
export function policiesOf(headers: Headers): Map<string, WindowPolicy> {
  return new Map(
    parseList(headers.get('ratelimit-policy')).map((member) => [
      member.name,
      { limit: integerOf(member.params.get('q')), seconds: integerOf(member.params.get('w')) },
    ]),
  );
}

/** The windows of the `RateLimit` field, with the quotas of `RateLimit-Policy`. */
export function windowsOf(headers: Headers): RateLimitWindow[] {
  const policies = policiesOf(headers);
  return parseList(headers.get('ratelimit')).flatMap((member) => {
    const remaining = integerOf(member.params.get('r'));
    const resetSeconds = integerOf(member.params.get('t'));
    if (remaining === undefined || resetSeconds === undefined) return [];
    return [{ name: member.name, limit: policies.get(member.name)?.limit, remaining, resetSeconds }];
  });
}

/** The state a response tells, or undefined when it carries no `X-RateLimit-*` fields. */
export function rateLimitOf(headers: Headers): RateLimitState | undefined {
  const limit = integerOf(headers.get('x-ratelimit-limit'));
  const remaining = integerOf(headers.get('x-ratelimit-remaining'));
  const reset = integerOf(headers.get('x-ratelimit-reset'));
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return { limit, remaining, reset, windows: windowsOf(headers) };
}
