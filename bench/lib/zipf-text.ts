/**
 * Synthetic text with natural term statistics for the keyword probes: words drawn with a Zipf law
 * (s = 1) over 60,000 distinct pseudo-words, chunks of about 120 words, queries of 2–6 words half
 * drawn by the same law (common words) and half uniformly (rare ones).
 */
import { createRandom, type Random } from './random.ts';

const VOCABULARY = 60_000;
const CHUNK_WORDS = 120;
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'pe', 'su', 'dra', 'ble', 'nor', 'gis', 'tam'];

export function vocabulary(random: Random): string[] {
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    let word = '';
    const length = random.int(2, 4);
    for (let i = 0; i < length; i++) word += random.pick(SYLLABLES);
    words.add(`${word}${random.pick(['', 'x', 'q', 'k', 'z'])}`);
  }
  return [...words];
}

/** Cumulative Zipf weights (s = 1) over the vocabulary's ranks. */
export function zipfTable(n: number): Float64Array {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += 1 / (i + 1);
    cdf[i] = total;
  }
  for (let i = 0; i < n; i++) cdf[i] = (cdf[i] as number) / total;
  return cdf;
}

export function zipfPick(cdf: Float64Array, random: Random): number {
  const u = random.next();
  let low = 0;
  let high = cdf.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((cdf[mid] as number) < u) low = mid + 1;
    else high = mid;
  }
  return low;
}

export function* chunks(count: number, words: readonly string[], cdf: Float64Array): Generator<string> {
  const random = createRandom(7);
  for (let n = 0; n < count; n++) {
    const parts: string[] = [];
    for (let i = 0; i < CHUNK_WORDS; i++) parts.push(words[zipfPick(cdf, random)] as string);
    yield parts.join(' ');
  }
}

export function queries(count: number, words: readonly string[], cdf: Float64Array): string[] {
  const random = createRandom(11);
  return Array.from({ length: count }, () => {
    const terms = new Set<string>();
    const size = random.int(2, 6);
    while (terms.size < size) {
      terms.add(words[random.chance(0.5) ? zipfPick(cdf, random) : random.int(0, words.length - 1)] as string);
    }
    return [...terms].join(' ');
  });
}
