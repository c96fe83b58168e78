import { distance } from 'fastest-levenshtein';

/**
 * The candidate nearest to `input` when it is near enough to be a slip of the fingers: two edits
 * (a swap of two letters counts two) or a third of the candidate, whichever is more, but never as
 * many edits as a short candidate has letters, which would suggest `--id` for any two letters.
 * Ties go to the earlier candidate.
 */
export function nearest(input: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const edits = distance(input, candidate);
    if (edits < bestDistance) {
      best = candidate;
      bestDistance = edits;
    }
  }
  if (best === undefined) return undefined;
  const tolerance = Math.max(Math.min(2, best.length - 1), Math.floor(best.length / 3));
  return bestDistance <= tolerance ? best : undefined;
}
