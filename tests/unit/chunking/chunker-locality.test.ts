/**
 * Chunker locality over every single-sentence edit of seeded documents (no HTTP: the chunker and the
 * diff the compare endpoint uses). Kept apart from the HTTP suites: it runs for seconds without
 * yielding, which would stall a service running in the same test process.
 */
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../core/chunking/chunker.ts';
import { parseMarkdown } from '../../../core/parsing/markdown.parser.ts';
import { diffChunks } from '../../../core/services/chunk-diff.ts';
import { reword, sentences } from '../../support/prose-edits.ts';
import { cloneProse, generateProse, type ProseDocument, renderMarkdown } from '../../support/seeded-prose.ts';

describe('the chunker keeps single-sentence edits local', () => {
  // Seeds 5 and 21 hold sections where rewording a paragraph's first sentence removes a cut whose
  // two sides do not fit in one chunk together; the chunker must move one cut there, not re-cut
  // the whole section (which once turned two chunks into four).
  it.each([5, 7, 21])('changes at most three neighbouring chunks for every sentence (seed %i)', (seed) => {
    // Every sentence of the document reworded in turn (no HTTP: the chunker and the diff the
    // compare endpoint uses). Content-defined cuts may move at the edit (a reworded paragraph start
    // re-ranks the break before it, a few tokens more or less can make a cut appear or vanish),
    // but never shift the chunks after it.
    const base = generateProse(seed, 25);
    const chunk = (doc: ProseDocument) => chunkDocument(parseMarkdown(Buffer.from(renderMarkdown(doc)))).chunks;
    const original = chunk(base);
    let single = 0;
    const all = sentences(base);
    for (const x of all) {
      const edited = cloneProse(base);
      (edited.sections[x.s]?.paragraphs[x.p] as string[])[x.k] = reword(x.text);
      const { diff, unchanged } = diffChunks(original, chunk(edited));
      expect(diff.length, x.text).toBeLessThanOrEqual(3);
      expect(unchanged, x.text).toBeGreaterThanOrEqual(original.length - 3);
      const from = diff.flatMap((d) => (d.from_index === null ? [] : [d.from_index]));
      const to = diff.flatMap((d) => (d.to_index === null ? [] : [d.to_index]));
      if (from.length > 0) expect(Math.max(...from) - Math.min(...from), x.text).toBeLessThanOrEqual(2);
      if (to.length > 0) expect(Math.max(...to) - Math.min(...to), x.text).toBeLessThanOrEqual(2);
      if (diff.length === 1 && diff[0]?.type === 'modified') single += 1;
    }
    // Most edits touch one chunk; the rest mostly reach the next chunk through the overlap.
    expect(single / all.length).toBeGreaterThan(0.75);
  });
});
