import { useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { Empty, Notice } from '../components/feedback.tsx';
import { Highlighted } from '../components/highlighted.tsx';
import { RelativeScore, ScoreLegend, type ScoreMode } from '../components/relative-score.tsx';
import { Link } from '../router.tsx';
import type { SearchResult } from '../types.ts';

interface SearchAnswer {
  mode: ScoreMode;
  results: SearchResult[];
  took_ms: number;
  as_of: string | null;
  warnings?: string[];
}

const MIME_TYPES = [
  ['text/plain', 'Text'],
  ['text/markdown', 'Markdown'],
  ['text/csv', 'CSV'],
  ['application/json', 'JSON'],
  ['application/pdf', 'PDF'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'DOCX'],
  ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'XLSX'],
] as const;

/** The mode whose scores an answer holds: hybrid search falls back to keyword when the index's model differs. */
function scoredMode(answer: SearchAnswer): ScoreMode {
  const fellBack = answer.warnings?.some((w) => w.includes('Falling back to keyword search')) ?? false;
  return answer.mode === 'hybrid' && fellBack ? 'keyword' : answer.mode;
}

const LEGEND_ID = 'score-legend';

/** The best score of an answer (phrase matches come first, so the top result need not hold it). */
function best(answer: SearchAnswer): number {
  return Math.max(...answer.results.map((r) => r.score));
}

export function SearchPage() {
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState('hybrid');
  const [limit, setLimit] = useState(10);
  const [asOf, setAsOf] = useState('');
  const [mimeTypes, setMimeTypes] = useState<string[]>([]);
  const [documentIds, setDocumentIds] = useState('');
  const [metadata, setMetadata] = useState('');
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const filters: Record<string, unknown> = {};
    if (mimeTypes.length > 0) filters.mime_types = mimeTypes;
    const ids = documentIds
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter(Boolean);
    if (ids.length > 0) filters.document_ids = ids;
    if (metadata.trim()) {
      try {
        filters.metadata = JSON.parse(metadata);
      } catch {
        setError('The metadata filter must be a JSON object, e.g. {"team": "ops"}.');
        return;
      }
    }
    const body: Record<string, unknown> = { query, mode, limit, filters };
    if (asOf) body.as_of = new Date(asOf).toISOString();
    setBusy(true);
    try {
      setAnswer(await api<SearchAnswer>('POST', '/api/v1/search', body));
    } catch (err) {
      setAnswer(null);
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const scoredAs = answer ? scoredMode(answer) : 'hybrid';
  const bestScore = answer && answer.results.length > 0 ? best(answer) : 0;

  return (
    <section>
      <h1>Search playground</h1>
      <form class="card search-form" onSubmit={submit} aria-label="Search">
        <label class="wide">
          Query
          <input type="search" required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <label>
          Mode
          <select value={mode} onChange={(e) => setMode(e.currentTarget.value)}>
            <option value="hybrid">hybrid</option>
            <option value="semantic">semantic</option>
            <option value="keyword">keyword</option>
          </select>
        </label>
        <label>
          Limit
          <input
            type="number"
            min={1}
            max={100}
            value={limit}
            onInput={(e) => setLimit(Number(e.currentTarget.value))}
          />
        </label>
        <label>
          As of (local time)
          <input
            type="datetime-local"
            step={1}
            name="as_of"
            value={asOf}
            onInput={(e) => setAsOf(e.currentTarget.value)}
          />
        </label>
        <fieldset class="wide">
          <legend>File types</legend>
          {MIME_TYPES.map(([type, label]) => (
            <label key={type} class="check">
              <input
                type="checkbox"
                checked={mimeTypes.includes(type)}
                onChange={(e) =>
                  setMimeTypes(e.currentTarget.checked ? [...mimeTypes, type] : mimeTypes.filter((m) => m !== type))
                }
              />
              {label}
            </label>
          ))}
        </fieldset>
        <label>
          Document ids
          <input value={documentIds} onInput={(e) => setDocumentIds(e.currentTarget.value)} />
        </label>
        <label>
          Metadata (JSON)
          <input value={metadata} placeholder='{"team": "ops"}' onInput={(e) => setMetadata(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      {answer && (
        <>
          <p class="muted" role="status">
            {answer.results.length} result{answer.results.length === 1 ? '' : 's'} in {answer.took_ms} ms
            {answer.as_of ? ` · as of ${new Date(answer.as_of).toLocaleString()}` : ''}
          </p>
          {answer.warnings?.map((w) => (
            <Notice kind="error" key={w}>
              {w}
            </Notice>
          ))}
          {answer.results.length === 0 ? (
            <Empty>Nothing matched. Try other words, another mode or a later instant.</Empty>
          ) : (
            <>
              <ScoreLegend mode={scoredAs} id={LEGEND_ID} />
              <ol class="results">
                {answer.results.map((r) => (
                  <li key={r.chunk_id} class="card">
                    <p class="result-head">
                      <Link
                        href={`/documents/${r.document_id}?version=${r.version}&chunk=${encodeURIComponent(r.chunk_id)}`}
                      >
                        {r.document_name}
                      </Link>
                      <span class="muted small">
                        {' '}
                        · version {r.version} · chunk {r.index}
                        {r.page !== null ? ` · page ${r.page}` : ''}
                      </span>
                    </p>
                    <p class="score-line">
                      <RelativeScore score={r.score} best={bestScore} mode={scoredAs} legendId={LEGEND_ID} />
                    </p>
                    {r.highlights.length > 0 ? (
                      r.highlights.map((h) => (
                        <p key={h} class="snippet">
                          <Highlighted snippet={h} />
                        </p>
                      ))
                    ) : (
                      <p class="snippet">{r.content.length > 400 ? `${r.content.slice(0, 400)}…` : r.content}</p>
                    )}
                  </li>
                ))}
              </ol>
            </>
          )}
        </>
      )}
    </section>
  );
}
