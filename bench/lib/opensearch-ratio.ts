import { parseSize } from '../corpus.ts';
import { addFigure, judge, type Row } from './report.ts';

/**
 * Adds to each embedded row whose scenario starts with `prefix` its one-client p50 ÷ the distributed
 * runtime's (OpenSearch) on the same scenario and size, measured in the same run; judged at most 2
 * where `judged` says so, at 100k chunks and more.
 */
export function addOpenSearchRatios(rows: Row[], prefix: string, judged: (row: Row) => boolean): void {
  const p50 = (row: Row | undefined) => row?.figures.find((f) => f.name === 'service p50, one client')?.values ?? [];
  for (const row of rows) {
    if (!row.scenario.startsWith(prefix) || row.runtime !== 'embedded') continue;
    const peer = rows.find((r) => r.scenario === row.scenario && r.runtime === 'distributed' && r.size === row.size);
    const ours = p50(row);
    const theirs = p50(peer);
    if (ours.length === 0 || theirs.length === 0) continue;
    const ratios = ours.map((value, i) => value / (theirs[i % theirs.length] as number));
    const figure = addFigure(row, 'one-client p50 ÷ OpenSearch (distributed) p50', 'ratio', ratios);
    if (judged(row) && parseSize(row.size.split(' ')[0] ?? '') >= 100_000) judge(figure, { atMost: 2 });
    row.notes.push('÷ OpenSearch pairs each embedded round with the distributed round of the same number, same corpus');
  }
}
