/**
 * nDCG@k with graded gains (gain = grade, discount log2(rank + 1)), as trec_eval and BEIR compute
 * it: the ideal ranking orders every judged document by grade.
 */
export function ndcgAt(k: number, ranking: readonly string[], judged: ReadonlyMap<string, number>): number {
  let dcg = 0;
  ranking.slice(0, k).forEach((id, i) => {
    dcg += (judged.get(id) ?? 0) / Math.log2(i + 2);
  });
  const ideal = [...judged.values()].sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((sum, grade, i) => sum + grade / Math.log2(i + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}

/** Share of the judged documents found in the first k. */
export function recallAt(k: number, ranking: readonly string[], judged: ReadonlyMap<string, number>): number {
  if (judged.size === 0) return 0;
  const top = new Set(ranking.slice(0, k));
  let found = 0;
  for (const id of judged.keys()) if (top.has(id)) found += 1;
  return found / judged.size;
}

/** The p-th percentile (0–100) by nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Distinct document ids in order of their first appearance (a document ranks by its best chunk). */
export function firstOccurrences(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}
