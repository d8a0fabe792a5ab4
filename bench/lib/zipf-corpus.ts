/**
 * Text with natural term statistics for the search benchmark: words drawn from a vocabulary of
 * {@link VOCABULARY_SIZE} terms with Zipf-distributed frequencies (the frequency of the term of rank
 * r is proportional to 1 / r^{@link ZIPF_EXPONENT}, as in natural language), so a few terms are in
 * nearly every chunk and most terms are in few of them, and an OR query of a handful of terms matches
 * a fraction of the corpus rather than all of it.
 *
 * The vocabulary: English function words first (the most frequent ranks, never drawn for queries),
 * then the corpus generator's topic words, then pronounceable pseudo-words made from syllables by a
 * generator seeded with the bench seed, so every run and every machine gets the same terms without a
 * word list to ship or install.
 */
import { corpusWords } from '../corpus.ts';
import { createRandom, type Random, seedFrom } from './random.ts';

/** Distinct terms in the vocabulary. */
export const VOCABULARY_SIZE = 60_000;
/** The Zipf exponent: 1 is the classic value for English word frequencies. */
export const ZIPF_EXPONENT = 1;

const FUNCTION_WORDS = (
  'the of and to a in is was for that on with as by at from it were be this are an or which has had ' +
  'not but its also been their they have than more after during into there these other two between ' +
  'both such when where while about under over most each all'
).split(' ');

const ONSETS = 'b c d f g h j k l m n p r s t v w z br cr dr fr gr pr tr bl cl fl gl pl sl st sk sp ch sh th'.split(
  ' ',
);
const VOWELS = 'a e i o u a o u ai au ea io ou'.split(' ');
const CODAS = ['', '', '', 'n', 'r', 'l', 'm', 'k', 't', 'nd', 'rk', 'lt', 'st'];
/** Word endings a Porter stemmer leaves alone (no -s, -ed, -ing, -e, -y, -ly, -er), so stemming merges few terms. */
const FINALS = 'a o u an on um ak ok ux ar or ix al ot it ad id um ab'.split(' ');

export interface ZipfVocabulary {
  /** Terms by rank: `terms[0]` is the most frequent. */
  readonly terms: readonly string[];
  /** Ranks below this are function words, left out of queries. */
  readonly firstContentRank: number;
  /** A rank drawn with Zipf probability among ranks `from` and above. */
  draw(rng: Random, from?: number): number;
}

function pseudoWord(rng: Random): string {
  const syllables = rng.int(1, 2);
  let word = '';
  for (let s = 0; s < syllables; s++) word += rng.pick(ONSETS) + rng.pick(VOWELS) + rng.pick(CODAS);
  return word + rng.pick(ONSETS) + rng.pick(FINALS);
}

/** The vocabulary of `seed` (the same terms in the same order for the same seed). */
export function zipfVocabulary(seed: number, size = VOCABULARY_SIZE): ZipfVocabulary {
  const rng = createRandom(seedFrom('zipf-vocabulary', seed));
  const seen = new Set<string>();
  const terms: string[] = [];
  const add = (term: string) => {
    if (!seen.has(term)) {
      seen.add(term);
      terms.push(term);
    }
  };
  for (const word of FUNCTION_WORDS) add(word);
  const firstContentRank = terms.length;
  // The topic words in a seeded order, so frequent content terms are real words.
  const topical = [...corpusWords()];
  for (let i = topical.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [topical[i], topical[j]] = [topical[j] as string, topical[i] as string];
  }
  for (const word of topical) add(word);
  while (terms.length < size) add(pseudoWord(rng));
  // Cumulative Zipf weights by rank, for drawing by binary search.
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let r = 0; r < size; r++) {
    total += 1 / (r + 1) ** ZIPF_EXPONENT;
    cumulative[r] = total;
  }
  return {
    terms,
    firstContentRank,
    draw(random, from = 0) {
      const low = from === 0 ? 0 : (cumulative[from - 1] as number);
      const target = low + random.next() * (total - low);
      let lo = from;
      let hi = size - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((cumulative[mid] as number) < target) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    },
  };
}

/**
 * A chunk-sized passage: about `words` words in sentences of 6–18, each word drawn from the
 * vocabulary; `ranks` receives the rank of every word written (for term statistics).
 */
export function zipfPassage(vocabulary: ZipfVocabulary, rng: Random, words: number, ranks?: number[]): string {
  const sentences: string[] = [];
  let count = 0;
  while (count < words) {
    const length = rng.int(6, 18);
    const parts: string[] = [];
    for (let w = 0; w < length; w++) {
      const rank = vocabulary.draw(rng);
      ranks?.push(rank);
      parts.push(vocabulary.terms[rank] as string);
    }
    const first = parts[0] as string;
    parts[0] = first.charAt(0).toUpperCase() + first.slice(1);
    sentences.push(`${parts.join(' ')}.`);
    count += length;
  }
  return sentences.join(' ');
}

/**
 * `count` queries of 2–6 distinct content terms each, drawn with the corpus's Zipf frequencies
 * (so most queries mix common and rare terms), as term ranks.
 */
export function zipfQueries(vocabulary: ZipfVocabulary, count: number, seed: number): number[][] {
  const rng = createRandom(seedFrom('zipf-queries', seed));
  return Array.from({ length: count }, () => {
    const length = rng.int(2, 6);
    const ranks = new Set<number>();
    while (ranks.size < length) ranks.add(vocabulary.draw(rng, vocabulary.firstContentRank));
    return [...ranks];
  });
}
