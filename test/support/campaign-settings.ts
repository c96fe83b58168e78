/** A whole-number setting of a campaign run by hand (`npm run fuzz`, test/scale/*-campaign.ts), from its variable. */
export function wholeNumberSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer (got ${raw})`);
  return value;
}
