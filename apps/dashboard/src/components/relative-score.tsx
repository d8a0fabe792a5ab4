/** The search modes, by what their scores are. */
export type ScoreMode = 'keyword' | 'semantic' | 'hybrid';

/** What a raw score is in each mode, for the legend and the tooltips. */
export const SCORE_MEANING: Readonly<Record<ScoreMode, string>> = {
  keyword:
    'Keyword scores are BM25: higher is better, but their size depends on the query and on the documents, so they cannot be compared across queries.',
  semantic:
    'Semantic scores are the cosine similarity of the query and the passage (at most 1; higher means closer in meaning).',
  hybrid:
    'Hybrid scores fuse both rankings: keyword and semantic scores are each scaled to 0–1 over their candidates and added with the weights, so 1 is the top of both.',
};

/** The raw score's name in each mode. */
const RAW_NAME: Readonly<Record<ScoreMode, string>> = { keyword: 'BM25', semantic: 'cosine', hybrid: 'fused' };

/** A score as a whole percentage of the best score of the answer (the best is 100; never below 0). */
export function relativeScore(score: number, best: number): number {
  if (!(best > 0)) return score >= best ? 100 : 0;
  return Math.min(100, Math.max(0, Math.round((score / best) * 100)));
}

/** Says once, above the results, what the bars and the raw scores mean. */
export function ScoreLegend(props: { mode: ScoreMode; id: string }) {
  return (
    <p class="muted small score-legend" id={props.id}>
      Each bar is the result's score as a share of the best result's (100 %); the raw score follows.{' '}
      {SCORE_MEANING[props.mode]}
    </p>
  );
}

/** One result's score: a bar and percentage relative to the best result, then the raw value. */
export function RelativeScore(props: { score: number; best: number; mode: ScoreMode; legendId: string }) {
  const percent = relativeScore(props.score, props.best);
  const raw = `${RAW_NAME[props.mode]} ${props.score.toFixed(3)}`;
  return (
    <span
      class="score"
      data-testid="score"
      aria-describedby={props.legendId}
      title={`${percent} % of the best result's score (raw ${raw}). ${SCORE_MEANING[props.mode]}`}
    >
      <meter min={0} max={100} value={percent} aria-label={`Score relative to the best result: ${percent} %`} />
      <span class="score-percent">{percent} %</span>
      <span class="muted small score-raw">{raw}</span>
    </span>
  );
}
