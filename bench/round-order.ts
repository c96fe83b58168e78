/**
 * The order in which a round measures its targets: every other round runs the one before it
 * backwards, so that every two targets run in both orders, and each pair of rounds starts one
 * target further along, so that none is always measured first or last. A rotation alone measures
 * each target right after the same neighbour every round, and a target may pay for what the one
 * before it left behind (disk writes after creations).
 */
export function roundOrder<T>(targets: readonly T[], round: number): T[] {
  const offset = Math.floor((round - 1) / 2);
  const rotated = targets.map((_, index) => targets[(index + offset) % targets.length] as T);
  return round % 2 === 0 ? rotated.reverse() : rotated;
}
