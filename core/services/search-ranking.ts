import type { SearchHit } from '../ports/document-store/document-store.port.ts';

/** A hit with the score the search mode gives it. */
export interface RankedHit {
  readonly hit: SearchHit;
  readonly score: number;
}

/** How much each ranking counts in hybrid search; non-negative, not both zero. */
export interface FusionWeights {
  readonly keyword: number;
  readonly semantic: number;
}

/**
 * Convex combination of min-max normalised scores: each ranking's scores are mapped to [0, 1] over
 * its own candidates (best 1, worst 0; a single candidate scores 1), a chunk missing from a ranking
 * gets 0 there, and the fused score is `w_k·keyword + w_s·semantic` with the weights scaled to sum 1,
 * so it lies in [0, 1]. Unlike reciprocal-rank fusion it keeps how far apart the scores are: a
 * keyword match far ahead of the rest stays ahead even when the vector ranking disagrees.
 * Ties break by chunk id, so equal inputs give equal orders.
 */
export function fuseScores(
  keyword: readonly SearchHit[],
  semantic: readonly SearchHit[],
  weights: FusionWeights,
): RankedHit[] {
  const total = weights.keyword + weights.semantic;
  const wk = total > 0 ? weights.keyword / total : 0.5;
  const ws = total > 0 ? weights.semantic / total : 0.5;
  const fused = new Map<string, { hit: SearchHit; score: number }>();
  const add = (ranking: readonly SearchHit[], weight: number) => {
    const normalised = minMax(ranking.map((h) => h.score));
    ranking.forEach((hit, i) => {
      const entry = fused.get(hit.chunk.id) ?? { hit, score: 0 };
      entry.score += weight * (normalised[i] as number);
      fused.set(hit.chunk.id, entry);
    });
  };
  add(keyword, wk);
  add(semantic, ws);
  return sortRanked([...fused.values()]);
}

function minMax(scores: readonly number[]): number[] {
  if (scores.length === 0) return [];
  const max = Math.max(...scores);
  const min = Math.min(...scores);
  const span = max - min;
  return scores.map((s) => (span > 0 ? (s - min) / span : 1));
}

export function sortRanked(ranked: RankedHit[]): RankedHit[] {
  return ranked.sort((a, b) => b.score - a.score || a.hit.chunk.id.localeCompare(b.hit.chunk.id));
}

/** Lower-case words (letters and digits) of a text, one space between them. */
export function normaliseWords(text: string): string {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

const WORD_RUN = /[\p{L}\p{N}]+/uy;
const SEPARATOR_RUN = /[^\p{L}\p{N}]+/uy;
const ENDS_IN_WORD = /[\p{L}\p{N}]$/u;

/** Whether `word` stands at `at` in `lower` (lower-cased text) as a whole word: no letter or digit touches it. */
export function wholeWordAt(lower: string, word: string, at: number): boolean {
  if (at > 0 && ENDS_IN_WORD.test(lower.slice(Math.max(0, at - 2), at))) return false;
  WORD_RUN.lastIndex = at;
  return WORD_RUN.exec(lower)?.[0] === word;
}

/**
 * Whether `lower` (lower-cased text) holds `words` as consecutive words, as `normaliseWords(text)`
 * would show them, without normalising the whole text: each place where the first word stands as
 * a whole word is followed run by run.
 */
function holdsWords(lower: string, words: readonly string[]): boolean {
  const [first = '', ...rest] = words;
  for (let at = lower.indexOf(first); at !== -1; at = lower.indexOf(first, at + 1)) {
    if (!wholeWordAt(lower, first, at)) continue;
    let position = at + first.length;
    let matched = true;
    for (const word of rest) {
      SEPARATOR_RUN.lastIndex = position;
      if (SEPARATOR_RUN.exec(lower) === null) {
        matched = false;
        break;
      }
      WORD_RUN.lastIndex = SEPARATOR_RUN.lastIndex;
      if (WORD_RUN.exec(lower)?.[0] !== word) {
        matched = false;
        break;
      }
      position = WORD_RUN.lastIndex;
    }
    if (matched) return true;
  }
  return false;
}

/** Words a query needs before it counts as a phrase: shorter queries rank by score alone. */
export const PHRASE_MIN_WORDS = 3;

/**
 * Phrase boost: when the query has at least {@link PHRASE_MIN_WORDS} words and some chunks hold
 * them as one run (case, punctuation and spacing aside), those chunks come first, in their score
 * order, followed by the rest. A user who pastes a passage gets its document first.
 */
export function phraseFirst(ranked: readonly RankedHit[], query: string): RankedHit[] {
  const words = normaliseWords(query).split(' ');
  if (words.length < PHRASE_MIN_WORDS) return [...ranked];
  const matches: RankedHit[] = [];
  const rest: RankedHit[] = [];
  for (const r of ranked) (holdsWords(r.hit.chunk.content.toLowerCase(), words) ? matches : rest).push(r);
  return [...matches, ...rest];
}

/** How results of one document share a page: see {@link collapse}. */
export type ResultGrouping = 'document' | 'passage' | 'none';

/** Characters of the earlier chunk's end that must reappear in the next chunk to count as overlap. */
const OVERLAP_PROBE = 20;

/**
 * Whether two chunks of one version are neighbours that share text: the chunker starts a chunk with
 * the tail of the previous one (`KB_CHUNK_OVERLAP` tokens), so the later chunk holds the end of the
 * earlier one.
 */
function overlaps(a: RankedHit['hit']['chunk'], b: RankedHit['hit']['chunk']): boolean {
  if (a.documentId !== b.documentId || a.version !== b.version || Math.abs(a.index - b.index) !== 1) return false;
  const [earlier, later] = a.index < b.index ? [a, b] : [b, a];
  const tail = earlier.content.trimEnd().slice(-OVERLAP_PROBE);
  return tail.length > 0 && later.content.includes(tail);
}

/**
 * Keeps a page from filling up with near-copies:
 * - `passage` (default): drops a chunk that shares text with a better-ranked neighbour of the same
 *   document version (consecutive chunks carry the overlap);
 * - `document`: one result per document, its best chunk;
 * - `none`: every chunk as ranked.
 *
 * Stops once it kept `limit` chunks: a later chunk never changes what an earlier one decided.
 */
export function collapse(ranked: readonly RankedHit[], grouping: ResultGrouping, limit = Infinity): RankedHit[] {
  if (grouping === 'none') return ranked.slice(0, limit);
  const kept: RankedHit[] = [];
  const seenDocuments = new Set<string>();
  for (const r of ranked) {
    if (kept.length >= limit) break;
    const { chunk } = r.hit;
    if (grouping === 'document') {
      if (seenDocuments.has(chunk.documentId)) continue;
      seenDocuments.add(chunk.documentId);
    } else if (kept.some((better) => overlaps(better.hit.chunk, chunk))) {
      continue;
    }
    kept.push(r);
  }
  return kept;
}
