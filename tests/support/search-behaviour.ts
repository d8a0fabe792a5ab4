/**
 * What search promises on both runtimes, as checks over the HTTP API: a quoted passage finds its
 * document first in every mode that uses keywords, page 1 does not depend on the page size, results
 * do not repeat overlapping chunks unless asked, and bad weights are refused. The embedded API suite
 * and the distributed integration suite run the same checks.
 */
import { describe, expect, it } from 'vitest';
import type { SearchView } from '../../core/model/response-views.model.ts';
import { generateProse, renderMarkdown } from './seeded-prose.ts';

export interface SearchClient {
  /** Uploads a Markdown document; resolves its id. */
  upload(name: string, text: string): Promise<string>;
  waitCompleted(id: string): Promise<void>;
  search(body: Record<string, unknown>): Promise<{ status: number; body: SearchView }>;
}

export interface SearchCorpus {
  readonly documents: ReadonlyArray<{ readonly id: string; readonly text: string }>;
}

/** Uploads `count` seeded prose documents (same vocabulary, so words alone rarely decide) and waits. */
export async function seedSearchCorpus(client: SearchClient, count = 10): Promise<SearchCorpus> {
  const documents: Array<{ id: string; text: string }> = [];
  for (let i = 0; i < count; i += 1) {
    const text = renderMarkdown(generateProse(1000 + i, 4));
    documents.push({ id: await client.upload(`prose-${i}.md`, text), text });
  }
  for (const doc of documents) await client.waitCompleted(doc.id);
  return { documents };
}

const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** A run of 12 words of `text` that no other document of the corpus contains. */
export function passageOf(text: string, others: readonly string[]): string {
  const otherText = others.map((o) => ` ${wordsOf(o).join(' ')} `);
  const paragraphs = text.split('\n').filter((line) => line && !line.startsWith('#'));
  for (const paragraph of paragraphs) {
    const tokens = paragraph.split(/\s+/);
    for (let start = 0; start + 12 <= tokens.length; start += 3) {
      const span = tokens.slice(start, start + 12).join(' ');
      const needle = ` ${wordsOf(span).join(' ')} `;
      if (!otherText.some((o) => o.includes(needle))) return span;
    }
  }
  throw new Error('no 12-word passage of the document is unique in the corpus');
}

export async function expectPassagesFoundFirst(client: SearchClient, corpus: SearchCorpus): Promise<void> {
  for (const mode of ['keyword', 'hybrid'] as const) {
    for (const doc of corpus.documents) {
      const query = passageOf(
        doc.text,
        corpus.documents.filter((d) => d !== doc).map((d) => d.text),
      );
      const res = await client.search({ query, mode, limit: 5 });
      expect(res.status).toBe(200);
      expect(res.body.results[0]?.document_id, `${mode}: "${query}"`).toBe(doc.id);
    }
  }
}

export async function expectPageIndependentOfLimit(client: SearchClient, queries: readonly string[]): Promise<void> {
  for (const mode of ['hybrid', 'semantic', 'keyword'] as const) {
    for (const query of queries) {
      const small = await client.search({ query, mode, limit: 3 });
      const large = await client.search({ query, mode, limit: 30 });
      expect(
        small.body.results.map((r) => r.chunk_id),
        `${mode}: ${query}`,
      ).toEqual(large.body.results.slice(0, 3).map((r) => r.chunk_id));
    }
  }
}

export async function expectGrouping(client: SearchClient, query: string): Promise<void> {
  const byDocument = await client.search({ query, limit: 20, group_by: 'document' });
  const ids = byDocument.body.results.map((r) => r.document_id);
  expect(new Set(ids).size).toBe(ids.length);
  const every = await client.search({ query, limit: 50, group_by: 'none' });
  const passages = await client.search({ query, limit: 50 });
  // By default no result shares text with a better neighbour of the same version; `none` keeps them.
  const overlapping = (results: SearchView['results']) =>
    results.filter((r, i) =>
      results.slice(0, i).some((better) => {
        if (better.document_id !== r.document_id || better.version !== r.version) return false;
        if (Math.abs(better.index - r.index) !== 1) return false;
        const [earlier, later] = better.index < r.index ? [better, r] : [r, better];
        return later.content.includes(earlier.content.trimEnd().slice(-20));
      }),
    ).length;
  expect(overlapping(every.body.results)).toBeGreaterThan(0);
  expect(overlapping(passages.body.results)).toBe(0);
}

export async function expectWeightsValidated(client: SearchClient): Promise<void> {
  const zero = await client.search({ query: 'anything', weights: { keyword: 0, semantic: 0 } });
  expect(zero.status).toBe(422);
  const keywordOnly = await client.search({ query: 'anything at all', weights: { keyword: 1, semantic: 0 } });
  expect(keywordOnly.status).toBe(200);
}

/** The four checks as one suite over a client and corpus that `setup` (a `beforeAll`) provides. */
export function describeSearchPromises(
  runtime: string,
  current: () => { client: SearchClient; corpus: SearchCorpus },
): void {
  describe(`search on the ${runtime} runtime`, () => {
    it('returns the document of a quoted 12-word passage first in keyword and hybrid mode', async () => {
      await expectPassagesFoundFirst(current().client, current().corpus);
    });

    it('answers the same first results whatever the page size', async () => {
      await expectPageIndependentOfLimit(current().client, [
        'harbour lighthouse keeper',
        'the committee approved the budget',
      ]);
    });

    it('groups chunks by document when asked and drops overlapping neighbours by default', async () => {
      await expectGrouping(current().client, 'the river and the old mill');
    });

    it('refuses weights that are zero for both rankings', async () => {
      await expectWeightsValidated(current().client);
    });
  });
}
