/**
 * Versions and time through the HTTP API of the embedded runtime: a document's
 * timeline searched `as_of` every step, its audit trail, a version held in `processing` while its
 * predecessor stays served, and concurrent updates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntryView, DocumentView, VersionView } from '../../core/model/response-views.model.ts';
import { createEmbeddingProbe, type EmbeddingProbe } from '../support/embedding-probe.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';
import {
  justAfter,
  listVersions,
  type Prefix,
  putContent,
  type SearchBody,
  search,
  waitForVersion,
} from '../support/version-client.ts';

let svc: TestService;
let probe: EmbeddingProbe;
let writer: { key: string; id: string };

beforeAll(async () => {
  probe = await createEmbeddingProbe();
  svc = await startTestService({ embeddings: probe });
  writer = await svc.createKey({ permissions: ['read', 'search', 'write'] });
});
afterAll(async () => {
  await svc?.close();
  await probe?.close();
});

/** A few paragraphs about one subject, each naming `word`, so search hits prove which version answered. */
function article(word: string, subject: string): string {
  return [
    `The ${word} survey of ${subject} began in the spring. Every ${word} reading was logged twice, once in the field and once at the office.`,
    `Later the ${word} team compared its notes on ${subject} with the older records and found the same seasonal pattern in each decade.`,
    `A final ${word} report on ${subject} recommended keeping the stations open through the winter months.`,
  ].join('\n\n');
}

/** Polls a version until it has completed or failed, and returns it. */
async function waitForVersionToEnd(documentId: string, version: number, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await svc.request<VersionView>('GET', `/api/v1/documents/${documentId}/versions/${version}`);
    expect(res.status).toBe(200);
    if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
    if (Date.now() > deadline) throw new Error(`version ${version} still ${res.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every result comes from `version` of the document and mentions `present` but never `absent`. */
function expectServed(body: SearchBody, documentId: string, version: number, present: string, absent: string) {
  expect(body.results.length).toBeGreaterThan(0);
  for (const r of body.results) {
    expect(r.document_id).toBe(documentId);
    expect(r.version).toBe(version);
    expect(r.content).not.toContain(absent);
  }
  expect(body.results.some((r) => r.content.includes(present))).toBe(true);
}

describe('a document timeline searched as of each step', () => {
  const V1 = article('heliograph', 'the northern lakes');
  const V2 = article('zeppelin', 'the coastal marshes');
  const query = 'heliograph zeppelin survey report';
  let id: string;
  let t0: number;
  const t: number[] = [];
  const requestIds: string[] = [];

  it('uploads v1, replaces it with v2, rolls back to v1 as v3 and deletes it, each served in turn', async () => {
    t0 = Date.now();
    // Nothing was ever served in this workspace before t0.
    expect((await search(svc, query, { asOf: new Date(t0 - 1), prefix: '/v1' })).results).toEqual([]);

    const up = await svc.upload('survey.txt', V1, {
      key: writer.key,
      metadata: { edition: 'first', team: 'north' },
      changeReason: 'initial import',
    });
    expect(up.status).toBe(201);
    id = up.body.document_id;
    requestIds.push(up.headers.get('x-request-id') ?? '');
    await waitForVersion(svc, id, 1);
    t.push(Date.now());
    expectServed(await search(svc, query, { documentIds: [id] }), id, 1, 'heliograph', 'zeppelin');

    const put = await putContent(svc, id, 'survey-v2.txt', V2, {
      prefix: '/v1',
      key: writer.key,
      metadata: { edition: 'second', team: 'coast' },
      changeReason: 'moved the survey to the coast',
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, version: 2, metadata: { edition: 'second', team: 'coast' } });
    requestIds.push(put.headers.get('x-request-id') ?? '');
    await waitForVersion(svc, id, 2);
    t.push(Date.now());
    expectServed(await search(svc, query, { documentIds: [id], prefix: '/v1' }), id, 2, 'zeppelin', 'heliograph');

    const rollback = await svc.request('POST', `/v1/documents/${id}/rollback`, {
      key: writer.key,
      json: { target_version: 1 },
    });
    expect(rollback.status).toBe(201);
    expect(rollback.body).toMatchObject({ document_id: id, version: 3, restored_from: 1 });
    requestIds.push(rollback.headers.get('x-request-id') ?? '');
    await waitForVersion(svc, id, 3);
    t.push(Date.now());
    const current = await search(svc, query, { documentIds: [id] });
    expectServed(current, id, 3, 'heliograph', 'zeppelin');
    // A future instant means now.
    const future = await search(svc, query, { documentIds: [id], asOf: new Date(Date.now() + 86_400_000) });
    expect(future.results.map((r) => r.chunk_id)).toEqual(current.results.map((r) => r.chunk_id));

    // History: newest first, the rollback marked, each served interval ending where the next begins.
    const versions = await listVersions(svc, id, '/v1');
    expect(versions.map((v) => [v.version, v.restored_from, v.change_reason])).toEqual([
      [3, 1, expect.stringMatching(/version 1\b/)],
      [2, null, 'moved the survey to the coast'],
      [1, null, 'initial import'],
    ]);
    const [v3, v2, v1] = versions as [VersionView, VersionView, VersionView];
    expect(v1.served_until).toBe(v2.served_from);
    expect(v2.served_until).toBe(v3.served_from);
    expect(v3.served_until).toBeNull();
    expect(v3.content_hash).toBe(v1.content_hash);

    const del = await svc.request('DELETE', `/api/v1/documents/${id}`, { key: writer.key });
    expect(del.status).toBe(204);
    requestIds.push(del.headers.get('x-request-id') ?? '');
    t.push(Date.now());
    expect((await search(svc, query, { documentIds: [id] })).results).toEqual([]);
    expect((await search(svc, query)).results.filter((r) => r.document_id === id)).toEqual([]);
    expect((await search(svc, query, { documentIds: [id], asOf: new Date(Date.now() + 86_400_000) })).results).toEqual(
      [],
    );
    expectProblem(await svc.request('GET', `/api/v1/documents/${id}`), 404, 'not-found');
    expectProblem(await svc.request('GET', `/v1/documents/${id}/versions`), 404, 'not-found');
  });

  it('answers as_of searches with the version served at each instant', async () => {
    const at = (i: number, prefix: Prefix) =>
      search(svc, query, { documentIds: [id], asOf: justAfter(t[i] as number), prefix });
    expectServed(await at(0, '/v1'), id, 1, 'heliograph', 'zeppelin');
    expectServed(await at(1, '/api/v1'), id, 2, 'zeppelin', 'heliograph');
    expectServed(await at(2, '/v1'), id, 3, 'heliograph', 'zeppelin');
    expect((await at(3, '/api/v1')).results).toEqual([]);
    // Before the upload: nothing, even without the document filter.
    expect((await search(svc, query, { asOf: new Date(t0 - 1) })).results).toEqual([]);
    const echoed = await at(1, '/v1');
    expect(echoed.as_of).toBe(justAfter(t[1] as number));
  });

  it('audits create, update, rollback and delete in order, each with its request id', async () => {
    const res = await svc.request<{ entries: AuditEntryView[] }>('GET', `/v1/audit-logs?document_id=${id}`);
    expect(res.status).toBe(200);
    const entries = res.body.entries;
    expect(entries.map((e) => e.action)).toEqual(['create', 'update', 'rollback', 'delete']);
    const stamps = entries.map((e) => Date.parse(e.timestamp));
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    for (const [i, e] of entries.entries()) {
      expect(e).toMatchObject({
        workspace_id: svc.workspaceId,
        document_id: id,
        actor: { type: 'api_key', id: writer.id },
        trace_id: requestIds[i],
      });
    }
    const [create, update, rollback, del] = entries as [AuditEntryView, AuditEntryView, AuditEntryView, AuditEntryView];
    expect(create).toMatchObject({
      version: 1,
      before: null,
      after: { version: 1, metadata: { edition: 'first', team: 'north' } },
      change_reason: 'initial import',
    });
    expect(update).toMatchObject({
      version: 2,
      before: { version: 1, metadata: { edition: 'first', team: 'north' } },
      after: { version: 2, metadata: { edition: 'second', team: 'coast' } },
      change_reason: 'moved the survey to the coast',
    });
    expect(rollback).toMatchObject({
      version: 3,
      before: { version: 2, metadata: { edition: 'second', team: 'coast' } },
      after: { version: 3, metadata: { edition: 'first', team: 'north' } },
    });
    expect(rollback.change_reason).toMatch(/version 1\b/);
    expect(del).toMatchObject({
      version: 3,
      before: { version: 3, metadata: { edition: 'first', team: 'north' } },
      after: null,
    });
  });

  it('forgets the document in every as_of search once purged', async () => {
    const purge = await svc.request('DELETE', `/v1/documents/${id}?purge=true`, { key: writer.key });
    expect(purge.status).toBe(204);
    for (const instant of t) {
      expect((await search(svc, query, { asOf: justAfter(instant) })).results).toEqual([]);
    }
    const audit = await svc.request<{ entries: AuditEntryView[] }>('GET', `/api/v1/audit-logs?document_id=${id}`);
    expect(audit.body.entries.map((e) => e.action)).toEqual(['create', 'update', 'rollback', 'delete', 'purge']);
    expect(audit.body.entries.at(-1)?.trace_id).toBe(purge.headers.get('x-request-id'));
  });
});

describe('a version still processing', () => {
  it('is never served: search keeps answering with its predecessor until it completes', async () => {
    const up = await svc.upload('lighthouse.txt', article('lanternfish', 'the harbour lights'), {
      metadata: { stage: 'draft' },
    });
    expect(up.status).toBe(201);
    const id: string = up.body.document_id;
    await waitForVersion(svc, id, 1);
    const query = 'lanternfish quasar survey';

    probe.hold();
    try {
      const put = await putContent(svc, id, 'lighthouse.txt', article('quasar', 'the harbour lights'), {
        metadata: { stage: 'final' },
      });
      expect(put.status).toBe(200);
      // The embed stage now waits inside the provider: version 2 is parsed, chunked and stuck.
      await probe.waitUntilHeld();
      const doc = await svc.request<DocumentView>('GET', `/v1/documents/${id}`);
      expect(doc.body).toMatchObject({ version: 2, status: 'processing', served_version: 1 });

      for (const prefix of ['/api/v1', '/v1'] as const) {
        expectServed(await search(svc, query, { documentIds: [id], prefix }), id, 1, 'lanternfish', 'quasar');
        const now = await search(svc, query, { documentIds: [id], prefix, asOf: new Date() });
        expectServed(now, id, 1, 'lanternfish', 'quasar');
      }
      const filtered = await search(svc, query, { documentIds: [id], metadata: { stage: 'final' } });
      expect(filtered.results).toEqual([]);
      const chunks = await svc.request('GET', `/api/v1/chunks/${id}`);
      expect(chunks.body.version).toBe(1);
      expect(JSON.stringify(chunks.body.chunks)).not.toContain('quasar');

      const versions = await listVersions(svc, id, '/v1');
      expect(versions.map((v) => [v.version, v.status])).toEqual([
        [2, 'processing'],
        [1, 'completed'],
      ]);
      expect(versions[1]?.served_until).toBeNull();
      // Versions compare, and show their full text, only once completed.
      expectProblem(await svc.request('GET', `/v1/documents/${id}/versions/compare?from=1&to=2`), 409, 'conflict');
      expectProblem(await svc.request('GET', `/api/v1/chunks/${id}/context?version=2`), 409, 'conflict');
    } finally {
      probe.release();
    }

    await waitForVersion(svc, id, 2);
    expectServed(await search(svc, query, { documentIds: [id] }), id, 2, 'quasar', 'lanternfish');
    const filtered = await search(svc, query, { documentIds: [id], metadata: { stage: 'final' } });
    expect(filtered.results.length).toBeGreaterThan(0);
    const [v2, v1] = await listVersions(svc, id);
    expect(v1?.served_until).toBe(v2?.served_from);
  });
  it('loses to a rollback made meanwhile: completing later never makes it current', async () => {
    const up = await svc.upload('tides.txt', article('nautilus', 'the tide tables'));
    const id: string = up.body.document_id;
    await waitForVersion(svc, id, 1);
    const query = 'nautilus kraken survey';

    probe.hold();
    let rolledBackAt = 0;
    try {
      expect((await putContent(svc, id, 'tides.txt', article('kraken', 'the tide tables'))).status).toBe(200);
      await probe.waitUntilHeld();
      // Version 2 is stuck in the embed stage; restoring version 1 needs no embedding at all.
      const rollback = await svc.request('POST', `/api/v1/documents/${id}/rollback`, { json: { target_version: 1 } });
      expect(rollback.body).toMatchObject({ version: 3, restored_from: 1, status: 'completed' });
      rolledBackAt = Date.now();
      expectServed(await search(svc, query, { documentIds: [id] }), id, 3, 'nautilus', 'kraken');
    } finally {
      probe.release();
    }
    // Version 2 was superseded by the rollback while it was embedding: its work stops at the next batch
    // boundary and it fails with `superseded` instead of completing behind the current version.
    const stopped = await waitForVersionToEnd(id, 2);
    expect(stopped).toMatchObject({ status: 'failed', error: { code: 'superseded' } });

    const doc = await svc.request<DocumentView>('GET', `/api/v1/documents/${id}`);
    expect(doc.body).toMatchObject({ version: 3, served_version: 3, status: 'completed' });
    expectServed(await search(svc, query, { documentIds: [id] }), id, 3, 'nautilus', 'kraken');
    expectServed(
      await search(svc, query, { documentIds: [id], asOf: justAfter(rolledBackAt) }),
      id,
      3,
      'nautilus',
      'kraken',
    );
    const [v3, v2, v1] = (await listVersions(svc, id)) as [VersionView, VersionView, VersionView];
    expect(v2).toMatchObject({ status: 'failed', served_from: null, served_until: null });
    expect(v1.served_until).toBe(v3.served_from);
  });
});

describe('concurrent updates of one document', () => {
  it('get versions 2..21 without gap or duplicate, and the highest ends up served', async () => {
    const up = await svc.upload('ledger.txt', article('abacus', 'the market ledgers'), { metadata: { rev: 0 } });
    expect(up.status).toBe(201);
    const id: string = up.body.document_id;
    await waitForVersion(svc, id, 1);

    // Ten new contents (PUT) and ten metadata changes (PATCH), all at once, through both prefixes.
    const marker = (i: number) => `revision${String.fromCharCode(97 + i)}${String.fromCharCode(97 + ((i * 7) % 26))}`;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const prefix: Prefix = i % 4 < 2 ? '/api/v1' : '/v1';
        if (i % 2 === 0) {
          return putContent(svc, id, 'ledger.txt', `${article(marker(i), 'the market ledgers')}\n\nRevision ${i}.`, {
            prefix,
            metadata: { rev: i + 1 },
            changeReason: `put ${i}`,
          });
        }
        return svc.request('PATCH', `${prefix}/documents/${id}`, {
          json: { metadata: { rev: i + 1 }, change_reason: `patch ${i}` },
        });
      }),
    );
    for (const res of responses) expect(res.status, res.text).toBe(200);
    const assigned = responses.map((res) => res.body.version as number);
    expect([...assigned].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));

    const deadline = Date.now() + 120_000;
    let versions = await listVersions(svc, id);
    const ended = (v: VersionView) => v.status === 'completed' || v.status === 'failed';
    while (!versions.every(ended) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      versions = await listVersions(svc, id);
    }
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: 21 }, (_, i) => 21 - i));
    // The newest completes; an older one either completed first or stopped because a newer one
    // superseded it — never for another reason.
    expect(versions[0]).toMatchObject({ version: 21, status: 'completed' });
    for (const v of versions) {
      expect(v.status === 'completed' || v.error?.code === 'superseded', JSON.stringify(v)).toBe(true);
    }

    const doc = await svc.request<DocumentView>('GET', `/api/v1/documents/${id}`);
    const winner = assigned.indexOf(21);
    expect(doc.body).toMatchObject({
      version: 21,
      served_version: 21,
      status: 'completed',
      metadata: { rev: winner + 1 },
    });

    // The served intervals chain without overlap: each served version ends exactly when the next begins.
    const served = [...versions].reverse().filter((v) => v.served_from !== null);
    expect(served.at(-1)).toMatchObject({ version: 21, served_until: null });
    for (let i = 0; i + 1 < served.length; i++) {
      expect(served[i]?.served_until).toBe(served[i + 1]?.served_from);
    }

    const results = (await search(svc, 'market ledgers survey', { documentIds: [id] })).results;
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r).toMatchObject({ version: 21, metadata: { rev: winner + 1 } });

    const audit = await svc.request<{ entries: AuditEntryView[] }>(
      'GET',
      `/api/v1/audit-logs?document_id=${id}&action=update&limit=100`,
    );
    const updates = audit.body.entries;
    expect(updates.map((e) => e.version).sort((a, b) => (a as number) - (b as number))).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 2),
    );
    for (const e of updates) expect(e.before?.version).toBe((e.version as number) - 1);
  });
});

describe('error answers of the version endpoints through both prefixes', () => {
  let id: string;
  let deletedId: string;

  beforeAll(async () => {
    const up = await svc.upload('errors.txt', article('sextant', 'the estuary'));
    id = up.body.document_id;
    await waitForVersion(svc, id, 1);
    expect((await putContent(svc, id, 'errors.txt', article('astrolabe', 'the estuary'))).status).toBe(200);
    await waitForVersion(svc, id, 2);
    const gone = await svc.upload('gone.txt', article('theodolite', 'the estuary'));
    deletedId = gone.body.document_id;
    await waitForVersion(svc, deletedId, 1);
    expect((await svc.request('DELETE', `/v1/documents/${deletedId}`)).status).toBe(204);
  });

  /** Every version endpoint of document `target`, under `prefix`. */
  const calls = (prefix: Prefix, target: string, key?: string) => {
    const opts = key ? { key } : {};
    return [
      () => svc.request('GET', `${prefix}/documents/${target}/versions`, opts),
      () => svc.request('GET', `${prefix}/documents/${target}/versions/1`, opts),
      () => svc.request('GET', `${prefix}/documents/${target}/versions/compare?from=1&to=2`, opts),
      () => svc.request('POST', `${prefix}/documents/${target}/rollback`, { ...opts, json: { target_version: 1 } }),
      () => svc.request('PATCH', `${prefix}/documents/${target}`, { ...opts, json: { metadata: { a: 1 } } }),
      () => putContent(svc, target, 'x.txt', 'new text', { prefix, ...(key ? { key } : {}) }),
    ];
  };

  it('answers 404 for another workspace’s, a malformed or a deleted document', async () => {
    for (const prefix of ['/api/v1', '/v1'] as const) {
      for (const call of [
        ...calls(prefix, id, svc.keys.otherWorkspace),
        ...calls(prefix, 'not-a-uuid'),
        ...calls(prefix, deletedId),
      ]) {
        expectProblem(await call(), 404, 'not-found');
      }
    }
  });

  it('answers 400 for bad version numbers and compare parameters, 422 for bad bodies, under /v1 too', async () => {
    for (const prefix of ['/api/v1', '/v1'] as const) {
      expectProblem(await svc.request('GET', `${prefix}/documents/${id}/versions/two`), 400, 'bad-request');
      expectProblem(await svc.request('GET', `${prefix}/documents/${id}/versions/99`), 404, 'not-found');
      for (const q of ['', '?from=1', '?from=x&to=2', '?from=-1&to=2']) {
        expectProblem(await svc.request('GET', `${prefix}/documents/${id}/versions/compare${q}`), 400, 'bad-request');
      }
      expectProblem(
        await svc.request('GET', `${prefix}/documents/${id}/versions/compare?from=1&to=9`),
        404,
        'not-found',
      );
      expectProblem(
        await svc.request('POST', `${prefix}/documents/${id}/rollback`, { json: { target_version: 9 } }),
        404,
        'not-found',
      );
      expectProblem(
        await svc.request('POST', `${prefix}/documents/${id}/rollback`, { json: { target: 1 } }),
        422,
        'validation-error',
      );
      expectProblem(
        await svc.request('PATCH', `${prefix}/documents/${id}`, { json: { metadata: 'x' } }),
        422,
        'validation-error',
      );
      expectProblem(await putContent(svc, id, 'x.txt', '', { prefix }), 400, 'bad-request');
    }
  });

  it('answers 409 for a rollback to the current version, and nothing changes', async () => {
    for (const prefix of ['/api/v1', '/v1'] as const) {
      expectProblem(
        await svc.request('POST', `${prefix}/documents/${id}/rollback`, { json: { target_version: 2 } }),
        409,
        'conflict',
      );
    }
    expect((await listVersions(svc, id)).map((v) => v.version)).toEqual([2, 1]);
    const audit = await svc.request<{ entries: AuditEntryView[] }>('GET', `/v1/audit-logs?document_id=${id}`);
    expect(audit.body.entries.map((e) => e.action)).toEqual(['create', 'update']);
  });
});
