import { stemmer } from 'stemmer';

/** Lucene's English stop words, as Anserini's default analyzer drops them. */
const STOP_WORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);

/** Lower-case words, stop words dropped, Porter-stemmed: Anserini's default English analysis. */
export function analyse(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => !STOP_WORDS.has(w)).map((w) => stemmer(w));
}

/**
 * Okapi BM25 over whole documents (k1 0.9, b 0.4, Lucene's idf), the usual flat-field baseline:
 * what a user gets from a plain search engine over the same corpus.
 */
export function createBm25(docs: ReadonlyArray<{ id: string; text: string }>, k1 = 0.9, b = 0.4) {
  const postings = new Map<string, Array<[number, number]>>();
  const lengths: number[] = [];
  docs.forEach((doc, d) => {
    const terms = analyse(doc.text);
    lengths.push(terms.length);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      const list = postings.get(t) ?? [];
      list.push([d, n]);
      postings.set(t, list);
    }
  });
  const avgLength = lengths.reduce((a, x) => a + x, 0) / Math.max(1, lengths.length);
  return {
    search(query: string, k: number): string[] {
      const scores = new Map<number, number>();
      for (const term of new Set(analyse(query))) {
        const list = postings.get(term);
        if (!list) continue;
        const idf = Math.log(1 + (docs.length - list.length + 0.5) / (list.length + 0.5));
        for (const [d, tf] of list) {
          const norm = tf + k1 * (1 - b + (b * (lengths[d] as number)) / avgLength);
          scores.set(d, (scores.get(d) ?? 0) + (idf * tf * (k1 + 1)) / norm);
        }
      }
      return [...scores.entries()]
        .sort((x, y) => y[1] - x[1] || x[0] - y[0])
        .slice(0, k)
        .map(([d]) => (docs[d] as { id: string }).id);
    },
  };
}
