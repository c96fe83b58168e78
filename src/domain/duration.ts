const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90s`, `15m`, `12h`, `30d`, `2w` → milliseconds; undefined when not of that form. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,6})([smhdw])$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}
