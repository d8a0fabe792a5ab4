import { describe, expect, it } from 'vitest';
import type { SearchHit } from '../../../core/ports/document-store/document-store.port.ts';
import { highlights, queryTerms } from '../../../core/services/search.service.ts';
import { collapse, fuseScores, normaliseWords, phraseFirst } from '../../../core/services/search-ranking.ts';

const hit = (id: string, score = 1, content = id, span: [number, number] = [0, 1]): SearchHit => ({
  chunk: {
    id,
    documentId: id.split(':')[0] as string,
    workspaceId: 'w',
    version: Number(id.split(':')[1] ?? 1),
    index: Number(id.split(':')[2] ?? 0),
    content,
    contentHash: id,
    tokens: 1,
    startOffset: span[0],
    endOffset: span[1],
    page: null,
    metadata: {},
  },
  score,
  documentName: 'doc',
  documentMetadata: {},
  mimeType: 'text/plain',
});

const ids = (ranked: ReadonlyArray<{ hit: SearchHit }>) => ranked.map((r) => r.hit.chunk.id);
const even = { keyword: 0.5, semantic: 0.5 };

describe('score fusion', () => {
  it('ranks a chunk found by both keyword and vector search above chunks found by one', () => {
    const fused = fuseScores([hit('a:1:0'), hit('b:1:0')], [hit('c:1:0'), hit('b:1:0')], even);
    expect(ids(fused)).toEqual(['b:1:0', 'a:1:0', 'c:1:0']);
  });

  it('scores first place in every ranking as 1', () => {
    const fused = fuseScores([hit('a:1:0')], [hit('a:1:0')], even);
    expect(fused[0]?.score).toBeCloseTo(1, 10);
  });

  it('follows the weights: all on one ranking reproduces its order', () => {
    const keyword = [hit('a:1:0', 9), hit('b:1:0', 5)];
    const semantic = [hit('b:1:0', 0.9), hit('a:1:0', 0.2)];
    expect(ids(fuseScores(keyword, semantic, { keyword: 1, semantic: 0 }))).toEqual(['a:1:0', 'b:1:0']);
    expect(ids(fuseScores(keyword, semantic, { keyword: 0, semantic: 1 }))).toEqual(['b:1:0', 'a:1:0']);
  });
});

describe('phrase boost', () => {
  const ranked = [
    { hit: hit('x:1:0', 1, 'cells and the powerhouse of mitochondria'), score: 0.9 },
    { hit: hit('y:1:0', 1, 'The Mitochondria is the powerhouse, of the cell!'), score: 0.5 },
  ];

  it('puts chunks holding the query as one run first, ignoring case and punctuation', () => {
    expect(ids(phraseFirst(ranked, 'mitochondria is the powerhouse of the cell'))).toEqual(['y:1:0', 'x:1:0']);
  });

  it('counts neither the words apart nor inside longer words as the phrase', () => {
    const candidates = [
      { hit: hit('a:1:0', 1, 'the cells of the powerhouse'), score: 0.9 },
      { hit: hit('b:1:0', 1, 'the powerhouse of the cellar'), score: 0.8 },
      { hit: hit('c:1:0', 1, 'It is THE powerhouse of the cell.'), score: 0.1 },
    ];
    expect(ids(phraseFirst(candidates, 'the powerhouse of the cell'))).toEqual(['c:1:0', 'a:1:0', 'b:1:0']);
  });

  it('finds the phrase exactly where the normalised text holds it (random texts)', () => {
    // The boost's definition: the query's normalised words appear as one run in the chunk's.
    const byDefinition = (content: string, query: string) =>
      ` ${normaliseWords(content)} `.includes(` ${normaliseWords(query)} `);
    const words = ['ab', 'AB', 'b', 'ab1', 'Ä', 'ä', 'x', 'é', 'Ab'];
    // An empty separator joins two words into one (`ab` + `b` is `abb`, not the phrase `ab b`).
    const separators = [' ', '  ', ', ', '-', '.', '😀', '\n', ''];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = (list: readonly string[]) => list[Math.floor(next() * list.length)] as string;
    const text = (n: number) => Array.from({ length: n }, () => pick(words) + pick(separators)).join('');
    let found = 0;
    for (let i = 0; i < 3000; i++) {
      const content = text(3 + Math.floor(next() * 10));
      const query = ['ab b ab', 'ab ab ab', 'ä b x', 'b ab1 ab', 'x é x'][i % 5] as string;
      const candidates = [
        { hit: hit('z:1:0', 1, 'nothing here at all'), score: 1 },
        { hit: hit('q:1:0', 1, content), score: 0.5 },
      ];
      const boosted = phraseFirst(candidates, query)[0]?.hit.chunk.id === 'q:1:0';
      expect(boosted, JSON.stringify({ content, query })).toBe(byDefinition(content, query));
      if (boosted) found += 1;
    }
    // Both outcomes occur often enough for the comparison to mean something.
    expect(found).toBeGreaterThan(50);
  });

  it('leaves queries of fewer than three words to the scores', () => {
    expect(ids(phraseFirst(ranked, 'the cell'))).toEqual(['x:1:0', 'y:1:0']);
  });
});

describe('grouping', () => {
  const ranked = [
    { hit: hit('a:1:3', 1, 'Chunk three of the text ends with the shared tail sentence.'), score: 0.9 },
    { hit: hit('a:1:4', 1, 'ends with the shared tail sentence. Chunk four goes on.'), score: 0.8 },
    { hit: hit('b:1:0', 1, 'Another document entirely.'), score: 0.7 },
    { hit: hit('a:1:9', 1, 'Chunk nine, far away.'), score: 0.6 },
  ];

  it('drops a chunk sharing text with a better neighbour of the same version by default', () => {
    expect(ids(collapse(ranked, 'passage'))).toEqual(['a:1:3', 'b:1:0', 'a:1:9']);
  });

  it('keeps neighbours that share no text (no overlap configured)', () => {
    const apart = [
      { hit: hit('a:1:3', 1, 'First passage, complete.'), score: 0.9 },
      { hit: hit('a:1:4', 1, 'Second passage, separate.'), score: 0.8 },
    ];
    expect(ids(collapse(apart, 'passage'))).toEqual(['a:1:3', 'a:1:4']);
  });

  it('gives one result per document, or every chunk, when asked', () => {
    expect(ids(collapse(ranked, 'document'))).toEqual(['a:1:3', 'b:1:0']);
    expect(ids(collapse(ranked, 'none'))).toEqual(['a:1:3', 'a:1:4', 'b:1:0', 'a:1:9']);
  });

  it('fills a page of `limit` results with what grouping all of them would put first', () => {
    expect(ids(collapse(ranked, 'passage', 2))).toEqual(['a:1:3', 'b:1:0']);
    expect(ids(collapse(ranked, 'document', 1))).toEqual(['a:1:3']);
    expect(ids(collapse(ranked, 'none', 3))).toEqual(['a:1:3', 'a:1:4', 'b:1:0']);
  });
});

describe('highlights', () => {
  it('wraps whole-word query terms in <em> and keeps context around them', () => {
    const text = `${'filler '.repeat(30)}The quarterly revenue grew strongly. ${'more '.repeat(30)}`;
    const [snippet] = highlights(text, queryTerms('Revenue growth'));
    expect(snippet).toContain('<em>revenue</em>');
    expect(snippet?.startsWith('…')).toBe(true);
  });

  it('returns no snippet when no term occurs', () => {
    expect(highlights('nothing relevant here', queryTerms('zebra'))).toEqual([]);
  });

  it('does not highlight the tail of a word the snippet starts inside', () => {
    // The snippet around the last "in" starts 80 characters before it, inside "domain".
    const text = `domain ${'x'.repeat(76)} in`;
    expect(highlights(text, ['in'])).toEqual([`…in ${'x'.repeat(76)} <em>in</em>`]);
  });

  it('matches whole words case aside, in any script, beside characters outside the BMP', () => {
    expect(highlights('Ärger ÄRGER ärgerlich', queryTerms('ärger'))).toEqual([
      '<em>Ärger</em> <em>ÄRGER</em> ärgerlich',
    ]);
    expect(highlights('😀beta beta😀 alphabeta', ['beta'])).toEqual(['😀<em>beta</em> <em>beta</em>😀 alphabeta']);
    expect(highlights('İstanbul and istanbul', ['istanbul'])).toEqual(['İstanbul and <em>istanbul</em>']);
  });

  it('escapes the text for HTML, so only its own <em> markers are markup', () => {
    const text = `<script>alert("x's")</script> the beta & <em>gamma</em> beta`;
    expect(highlights(text, ['beta', 'script'])).toEqual([
      '&lt;<em>script</em>&gt;alert(&quot;x&#39;s&quot;)&lt;/<em>script</em>&gt; the <em>beta</em> &amp; &lt;em&gt;gamma&lt;/em&gt; <em>beta</em>',
    ]);
  });

  it('does not treat regex characters in the query as patterns', () => {
    expect(queryTerms('c++ (beta)*')).toEqual(['beta']);
    expect(highlights('the beta release', ['beta'])).toEqual(['the <em>beta</em> release']);
  });
});
