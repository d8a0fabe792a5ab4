/**
 * Real edits of long markdown documents through the HTTP API of the embedded runtime: what
 * compare shows, how many chunk texts reach the embedding provider, and the fast paths of
 * rollback and metadata changes (chunking, update, patch, compare and rollback).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkView, CompareView } from '../../core/model/response-views.model.ts';
import { createEmbeddingProbe, type EmbeddingProbe } from '../support/embedding-probe.ts';
import { reword, type SentenceAt, sentences } from '../support/prose-edits.ts';
import { cloneProse, generateProse, type ProseDocument, renderMarkdown } from '../support/seeded-prose.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { listVersions, type Prefix, putContent, search, waitForVersion } from '../support/version-client.ts';

let svc: TestService;
let probe: EmbeddingProbe;

beforeAll(async () => {
  probe = await createEmbeddingProbe();
  svc = await startTestService({ embeddings: probe });
});
afterAll(async () => {
  await svc?.close();
  await probe?.close();
});

type Diff = CompareView['changes']['diff'][number];

async function compare(id: string, from: number, to: number, prefix: Prefix = '/api/v1'): Promise<CompareView> {
  const res = await svc.request<CompareView>('GET', `${prefix}/documents/${id}/versions/compare?from=${from}&to=${to}`);
  expect(res.status, res.text).toBe(200);
  const { changes } = res.body;
  const count = (type: Diff['type']) => changes.diff.filter((d) => d.type === type).length;
  // The counts always match the entries.
  expect([changes.added_chunks, changes.removed_chunks, changes.modified_chunks]).toEqual([
    count('added'),
    count('removed'),
    count('modified'),
  ]);
  return res.body;
}

async function chunksOf(id: string, version: number): Promise<ChunkView[]> {
  const out: ChunkView[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?version=${version}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await svc.request('GET', `/api/v1/chunks/${id}${query}`);
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.chunks);
    cursor = res.body.pagination.has_more ? res.body.pagination.next_cursor : null;
  } while (cursor);
  return out;
}

/** PUT new content, wait for it, and return how many chunk texts its ingestion sent to the provider. */
async function update(id: string, doc: ProseDocument, version: number, prefix: Prefix = '/api/v1') {
  probe.reset();
  const res = await putContent(svc, id, 'annals.md', renderMarkdown(doc), { prefix, type: 'text/markdown' });
  expect(res.status, res.text).toBe(200);
  expect(res.body.version).toBe(version);
  await waitForVersion(svc, id, version, { timeoutMs: 300_000 });
  return probe.texts.length;
}

describe('compare after real edits of a ~60-chunk markdown document', { timeout: 300_000 }, () => {
  const base = generateProse(7, 25);
  let id: string;
  let v1: ChunkView[];

  it('ingests version 1', async () => {
    probe.reset();
    const up = await svc.upload('annals.md', renderMarkdown(base), { type: 'text/markdown' });
    expect(up.status).toBe(201);
    id = up.body.document_id;
    await waitForVersion(svc, id, 1, { timeoutMs: 300_000 });
    v1 = await chunksOf(id, 1);
    expect(v1.length).toBeGreaterThanOrEqual(50);
    expect(v1.length).toBeLessThanOrEqual(75);
    // Every distinct chunk text went through the provider once.
    expect(probe.texts.length).toBe(new Set(v1.map((c) => c.content)).size);
  });

  it('(a) a paragraph inserted at the start changes the first chunk only, no cascade', async () => {
    const edited = cloneProse(base);
    const preface = [
      'A preface added for this edition explains why the annals were collected, who paid for binding the volumes, and why the entries keep their original spelling.',
      'It also thanks the archivists of the river towns, whose patience made the index possible.',
    ];
    edited.sections[0]?.paragraphs.unshift(preface);
    const embedded = await update(id, edited, 2);

    const { changes } = await compare(id, 1, 2, '/v1');
    expect(changes.removed_chunks).toBe(0);
    expect(changes.added_chunks).toBeLessThanOrEqual(1);
    expect(changes.modified_chunks).toBeLessThanOrEqual(1);
    expect(changes.added_chunks + changes.modified_chunks).toBeGreaterThanOrEqual(1);
    expect(changes.unchanged_chunks).toBe(v1.length - changes.modified_chunks);
    for (const d of changes.diff) {
      expect(d.to_index).toBeLessThanOrEqual(1);
      if (d.type === 'modified') expect(d.from_index).toBe(0);
    }
    expect(JSON.stringify(changes.diff)).toContain('A preface added for this edition');
    // Only the new chunk texts were embedded.
    expect(embedded).toBe(changes.added_chunks + changes.modified_chunks);
  });

  it('(b) a sentence edited in the middle of a chunk modifies exactly that chunk', async () => {
    // A sentence that lies in one chunk's own text only: not in the overlap copied into the next
    // chunk, and not the first sentence of its paragraph (whose first characters decide whether
    // the paragraph break before it is a cut).
    const k = Math.floor(v1.length / 2);
    const inside = sentences(base).filter(
      (x) =>
        x.k > 0 &&
        v1[k]?.content.includes(x.text) &&
        !v1[k - 1]?.content.includes(x.text) &&
        !v1[k + 1]?.content.includes(x.text),
    );
    const target = inside[Math.floor(inside.length / 2)] as SentenceAt;
    expect(target).toBeDefined();
    const edited = cloneProse(base);
    const paragraph = edited.sections[target.s]?.paragraphs[target.p] as string[];
    paragraph[target.k] = reword(target.text);
    const embedded = await update(id, edited, 3, '/v1');

    const { changes } = await compare(id, 1, 3);
    expect(changes).toMatchObject({ added_chunks: 0, removed_chunks: 0, modified_chunks: 1 });
    expect(changes.unchanged_chunks).toBe(v1.length - 1);
    const [entry] = changes.diff;
    expect(entry).toMatchObject({ type: 'modified', from_index: k, to_index: k });
    if (entry?.type === 'modified') {
      expect(entry.old_content).toContain(target.text);
      expect(entry.new_content).toContain(paragraph[target.k]);
    }
    expect(embedded).toBe(1);
  });

  it('(b) a sentence edited at the end of a chunk also changes the next chunk, through the overlap only', async () => {
    // Each chunk starts with up to 64 tokens of the previous chunk's tail (the overlap), so a
    // sentence in that tail is part of two chunks' content and an edit of it modifies both. The
    // cut between them stays where it was: two `modified` entries at the same positions.
    const k = Math.floor(v1.length / 3);
    const shared = sentences(base).filter(
      (x) => x.k > 0 && v1[k]?.content.includes(x.text) && v1[k + 1]?.content.includes(x.text),
    );
    const target = shared.at(-1) as SentenceAt;
    expect(target).toBeDefined();
    const edited = cloneProse(base);
    const paragraph = edited.sections[target.s]?.paragraphs[target.p] as string[];
    paragraph[target.k] = reword(target.text);
    const embedded = await update(id, edited, 4);

    const { changes } = await compare(id, 1, 4, '/v1');
    expect(changes).toMatchObject({ added_chunks: 0, removed_chunks: 0, modified_chunks: 2 });
    expect(changes.diff.map((d) => [d.type, d.from_index, d.to_index])).toEqual([
      ['modified', k, k],
      ['modified', k + 1, k + 1],
    ]);
    const next = changes.diff[1];
    if (next?.type === 'modified') {
      // The next chunk's own text is untouched: only its leading overlap differs.
      const nextOld = (v1[k + 1] as ChunkView).content;
      const own = nextOld.slice(nextOld.indexOf(target.text) + target.text.length);
      expect(own.length).toBeGreaterThan(100);
      expect(next.new_content.endsWith(own)).toBe(true);
    }
    expect(embedded).toBe(2);
  });

  it('(c) a deleted section shows as removed chunks', async () => {
    const s = Math.floor(base.sections.length / 2);
    const heading = base.sections[s]?.heading as string;
    const sectionChunks = v1.filter((c) => (c.metadata.headings as string[]).at(-1) === heading).map((c) => c.index);
    expect(sectionChunks.length).toBeGreaterThan(0);
    const edited = cloneProse(base);
    edited.sections.splice(s, 1);
    const embedded = await update(id, edited, 5, '/v1');

    const { changes } = await compare(id, 1, 5);
    expect(changes.added_chunks).toBe(0);
    // A section starts with a heading, which always cuts, and no overlap crosses a heading: the
    // chunks around it stay as they were (one neighbour may absorb a short leftover at most).
    expect(changes.modified_chunks).toBeLessThanOrEqual(1);
    expect(changes.removed_chunks).toBeGreaterThanOrEqual(sectionChunks.length - changes.modified_chunks);
    const removed = changes.diff.filter((d) => d.type === 'removed').map((d) => d.from_index as number);
    for (const index of removed) expect(sectionChunks).toContain(index);
    for (const d of changes.diff) {
      if (d.type === 'removed') expect(d.to_index).toBeNull();
    }
    expect(changes.unchanged_chunks).toBe(v1.length - changes.removed_chunks - changes.modified_chunks);
    expect(embedded).toBe(changes.modified_chunks);
    const v5 = await chunksOf(id, 5);
    expect(v5).toHaveLength(v1.length - changes.removed_chunks);
    expect(JSON.stringify(v5)).not.toContain(heading);
  });

  it('compares in both directions: added and removed swap sides', async () => {
    const forward = await compare(id, 1, 2);
    const backward = await compare(id, 2, 1, '/v1');
    expect(backward.changes.added_chunks).toBe(forward.changes.removed_chunks);
    expect(backward.changes.removed_chunks).toBe(forward.changes.added_chunks);
    expect(backward.changes.modified_chunks).toBe(forward.changes.modified_chunks);
    expect(backward.changes.unchanged_chunks).toBe(forward.changes.unchanged_chunks);
  });
});

describe('a ~1,000-chunk document', { timeout: 120_000 }, () => {
  const base = generateProse(1000, 450);
  let id: string;
  let chunkCount: number;
  /** The paragraph the update rewrites, as version 1 has it. */
  const rewritten = base.sections[225]?.paragraphs[1] as string[];

  it('re-embeds at most 3 chunks when one paragraph is edited', { timeout: 1_200_000 }, async () => {
    probe.reset();
    const up = await svc.upload('annals-complete.md', renderMarkdown(base), {
      type: 'text/markdown',
      metadata: { collection: 'annals', reviewed: 'no' },
    });
    expect(up.status).toBe(201);
    id = up.body.document_id;
    const v1 = await waitForVersion(svc, id, 1, { timeoutMs: 1_100_000, intervalMs: 500 });
    chunkCount = v1.chunk_count;
    expect(chunkCount).toBeGreaterThanOrEqual(900);
    expect(chunkCount).toBeLessThanOrEqual(1100);
    // The probe sees the real ingestion: every distinct chunk text once.
    expect(probe.texts.length).toBeGreaterThanOrEqual(900);

    // Rewrite one paragraph in the middle: every sentence of it changes.
    const edited = cloneProse(base);
    edited.sections[225]?.paragraphs.splice(
      1,
      1,
      rewritten.map((x) => `Revised: ${x.replace(/\b(the|a)\b/, 'one')}`),
    );
    const embedded = await update(id, edited, 2);
    expect(embedded).toBeGreaterThanOrEqual(1);
    expect(embedded).toBeLessThanOrEqual(3);
    const { changes } = await compare(id, 1, 2);
    expect(changes.added_chunks + changes.modified_chunks).toBe(embedded);
    expect(changes.unchanged_chunks).toBeGreaterThanOrEqual(chunkCount - 3);
  });

  it('rolls back without calling the provider: 201, completed, the same chunks as the target', async () => {
    probe.reset();
    const res = await svc.request('POST', `/v1/documents/${id}/rollback`, { json: { target_version: 1 } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ document_id: id, version: 3, restored_from: 1, status: 'completed' });
    expect(probe.texts).toEqual([]);
    const { changes } = await compare(id, 1, 3, '/v1');
    expect(changes).toMatchObject({
      added_chunks: 0,
      removed_chunks: 0,
      modified_chunks: 0,
      unchanged_chunks: chunkCount,
      diff: [],
    });
    // Search serves version 3 at once, with the paragraph as it was in version 1.
    const hits = await search(svc, rewritten[0] as string, { documentIds: [id], mode: 'keyword', limit: 5 });
    expect(hits.results.length).toBeGreaterThan(0);
    expect(hits.results[0]?.content).toContain(rewritten[0]);
    for (const r of hits.results) {
      expect(r.version).toBe(3);
      expect(r.content).not.toContain('Revised: ');
    }
    expect(probe.texts).toEqual([]);
  });

  it('changes metadata with PATCH: new version, no provider call, same chunks, new metadata in search', async () => {
    const before = Date.now();
    probe.reset();
    const res = await svc.request('PATCH', `/api/v1/documents/${id}`, {
      json: { metadata: { collection: 'annals', reviewed: 'yes' }, change_reason: 'proofread' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 4, metadata: { collection: 'annals', reviewed: 'yes' } });
    const v4 = await waitForVersion(svc, id, 4);
    expect(v4).toMatchObject({ chunk_count: chunkCount, change_reason: 'proofread' });
    expect(probe.texts).toEqual([]);
    const { changes } = await compare(id, 3, 4);
    expect(changes).toMatchObject({ modified_chunks: 0, added_chunks: 0, removed_chunks: 0, diff: [] });

    const query = 'harbour authority drainage plan';
    const current = await search(svc, query, { documentIds: [id] });
    expect(current.results.length).toBeGreaterThan(0);
    for (const r of current.results) {
      expect(r).toMatchObject({ version: 4, metadata: { collection: 'annals', reviewed: 'yes' } });
    }
    for (const prefix of ['/api/v1', '/v1'] as const) {
      const yes = await search(svc, query, { prefix, metadata: { reviewed: 'yes' } });
      expect(yes.results.length).toBeGreaterThan(0);
      expect(yes.results.every((r) => r.document_id === id && r.version === 4)).toBe(true);
      expect((await search(svc, query, { prefix, metadata: { reviewed: 'no' } })).results).toEqual([]);
    }
    // Before the PATCH the old metadata was served, and the filter says so.
    const earlier = await search(svc, query, { metadata: { reviewed: 'no' }, asOf: new Date(before) });
    expect(earlier.results.length).toBeGreaterThan(0);
    expect(earlier.results.every((r) => r.version === 3)).toBe(true);
    expect(probe.texts).toEqual([]);

    const versions = await listVersions(svc, id, '/v1');
    expect(versions.map((v) => [v.version, v.status, v.chunk_count])).toEqual([
      [4, 'completed', chunkCount],
      [3, 'completed', chunkCount],
      [2, 'completed', expect.any(Number)],
      [1, 'completed', chunkCount],
    ]);
  });
});
