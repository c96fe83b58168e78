/**
 * The order in which a round measures its targets: every other round runs the one before it
 * backwards, so that every two targets run in both orders, and each pair of rounds starts one
 * target further along, so that none is always measured first or last. Order matters most to
 * creations: a target measured right after another pays for the disk writes the other left behind,
 * and a rotation alone keeps neighbours in the same order every round.
 */
export function roundOrder<T>(targets: readonly T[], round: number): T[] {
  const offset = Math.floor((round - 1) / 2);
  const rotated = targets.map((_, index) => targets[(index + offset) % targets.length] as T);
  return round % 2 === 0 ? rotated.reverse() : rotated;
}
