import { describe, expect, it } from 'vitest';
import type { SearchHit } from '../../../pipeline/ports/document-store/document-store.port.ts';
import { fuse, highlights, queryTerms } from '../../../pipeline/services/search.service.ts';

const hit = (id: string, score = 1): SearchHit => ({
  chunk: {
    id,
    documentId: id.split(':')[0] as string,
    workspaceId: 'w',
    version: 1,
    index: 0,
    content: id,
    contentHash: id,
    tokens: 1,
    startOffset: 0,
    endOffset: 1,
    page: null,
    metadata: {},
  },
  score,
  documentName: 'doc',
  documentMetadata: {},
  mimeType: 'text/plain',
});

describe('reciprocal rank fusion', () => {
  it('ranks a chunk found by both keyword and vector search above chunks found by one', () => {
    const fused = fuse([
      [hit('a:1:0'), hit('b:1:0')],
      [hit('c:1:0'), hit('b:1:0')],
    ]);
    expect(fused.map((f) => f.hit.chunk.id)).toEqual(['b:1:0', 'a:1:0', 'c:1:0']);
  });

  it('scores first place in every ranking as 1', () => {
    const fused = fuse([[hit('a:1:0')], [hit('a:1:0')]]);
    expect(fused[0]?.score).toBeCloseTo(1, 10);
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

  it('does not treat regex characters in the query as patterns', () => {
    expect(queryTerms('c++ (beta)*')).toEqual(['beta']);
    expect(highlights('the beta release', ['beta'])).toEqual(['the <em>beta</em> release']);
  });
});
