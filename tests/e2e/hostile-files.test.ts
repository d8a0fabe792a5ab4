import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetter } from '../../core/events/events.ts';
import type { DocumentView } from '../../core/model/response-views.model.ts';
import {
  deeplyNestedJson,
  fixture,
  longLineCsv,
  manyRowsXlsx,
  manySharedStringsXlsx,
} from '../fixtures/hostile-files.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * Hostile files through the API of one running service: each ends `failed` at the parse stage
 * with its own error code (not a timeout), while a normal document uploaded alongside completes,
 * readiness stays 200 and the process's memory stays bounded.
 */

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
/** Well above what any case needs (a few seconds each), well below the default two minutes. */
const PARSE_TIMEOUT_MS = 20_000;
const RSS_LIMIT = 2 * 1024 ** 3;

interface HostileCase {
  readonly title: string;
  readonly file: string;
  readonly declared: string;
  readonly make: () => Buffer;
  readonly code: string;
  readonly message: RegExp;
}

const CASES: readonly HostileCase[] = [
  {
    title: 'DOCX zip bomb',
    file: 'bomb.docx',
    declared: DOCX,
    make: () => fixture('docx-bomb.docx'),
    code: 'decompression-bomb',
    message: /declares 300 MiB/,
  },
  {
    title: 'DOCX zip bomb whose sizes lie',
    file: 'bomb-lying.docx',
    declared: DOCX,
    make: () => fixture('docx-bomb-lying.docx'),
    code: 'decompression-bomb',
    message: /beyond its declared size/,
  },
  {
    title: 'XLSX zip bomb',
    file: 'bomb.xlsx',
    declared: XLSX,
    make: () => fixture('xlsx-bomb.xlsx'),
    code: 'decompression-bomb',
    message: /declares 300 MiB/,
  },
  {
    title: 'billion-laughs DOCX',
    file: 'laughs.docx',
    declared: DOCX,
    make: () => fixture('billion-laughs.docx'),
    code: 'unsupported-content',
    message: /DTD/,
  },
  {
    title: 'encrypted PDF',
    file: 'locked.pdf',
    declared: 'application/pdf',
    make: () => fixture('encrypted.pdf'),
    code: 'encrypted-file',
    message: /password/,
  },
  {
    title: 'truncated PDF',
    file: 'cut-off.pdf',
    declared: 'application/pdf',
    make: () => fixture('truncated.pdf'),
    code: 'corrupt-file',
    message: /PDF/,
  },
  {
    title: 'PDF whose page tree loops',
    file: 'loop.pdf',
    declared: 'application/pdf',
    make: () => fixture('page-loop.pdf'),
    code: 'corrupt-file',
    message: /circular/,
  },
  {
    title: 'XLSX with a million rows',
    file: 'million.xlsx',
    declared: XLSX,
    make: () => manyRowsXlsx(1_000_000),
    code: 'content-too-large',
    message: /rows/,
  },
  {
    title: 'XLSX with 400,000 shared strings',
    file: 'strings.xlsx',
    declared: XLSX,
    make: () => manySharedStringsXlsx(400_000),
    code: 'content-too-large',
    message: /shared-string table has more than 200000 strings/,
  },
  {
    title: 'CSV with a 10 MB line',
    file: 'long-line.csv',
    declared: 'text/csv',
    make: () => longLineCsv(10 * 1024 * 1024),
    code: 'content-too-large',
    message: /record/,
  },
  {
    title: 'JSON nested 100,000 levels',
    file: 'deep.json',
    declared: 'application/json',
    make: () => deeplyNestedJson(100_000),
    code: 'content-too-large',
    message: /nested/,
  },
];

const NORMAL = '# Harbour log\n\nThe tugboat captain logged calm water and a cargo of teak at dawn.\n';

let svc: TestService;
const ids = new Map<string, string>();
let normalId = '';
const readiness: Array<{ status: number; body: string }> = [];
let peakRss = 0;
/** RSS once the test's own files are built, before any upload. */
let baselineRss = 0;
let monitor: NodeJS.Timeout | undefined;
let sampling: Promise<void> = Promise.resolve();

/** Samples readiness and RSS every 200 ms until stopped. */
function startMonitor(): void {
  const sample = async () => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    const res = await fetch(`${svc.url}/health/ready`);
    readiness.push({ status: res.status, body: await res.text() });
  };
  monitor = setInterval(() => {
    sampling = sampling.then(sample, sample);
  }, 200);
}

async function stopMonitor(): Promise<void> {
  clearInterval(monitor);
  monitor = undefined;
  await sampling.catch(() => undefined);
}

async function terminal(id: string): Promise<DocumentView> {
  const deadline = Date.now() + 4 * PARSE_TIMEOUT_MS;
  for (;;) {
    const res = await svc.request<DocumentView>('GET', `/api/v1/documents/${id}`);
    expect(res.status).toBe(200);
    if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
    if (Date.now() > deadline) throw new Error(`document ${id} is still ${res.body.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  svc = await startTestService({
    env: { KB_PARSE_TIMEOUT_MS: String(PARSE_TIMEOUT_MS), KB_PARSE_THREADS: '2', KB_PARSE_MAX_HEAP_MB: '512' },
  });
  // Built before the monitor starts: making the big files blocks this process (the service's too)
  // for seconds, which would delay health checks for reasons of the test's own making.
  const files = CASES.map((c) => c.make());
  baselineRss = process.memoryUsage.rss();
  startMonitor();
  for (const [i, c] of CASES.entries()) {
    const res = await svc.upload(c.file, files[i] as Buffer, { type: c.declared });
    expect(res.status, `${c.title}: ${res.text}`).toBe(201);
    ids.set(c.title, res.body.document_id);
  }
  const res = await svc.upload('harbour.md', NORMAL, { type: 'text/markdown' });
  expect(res.status).toBe(201);
  normalId = res.body.document_id;
}, 120_000);

afterAll(async () => {
  await stopMonitor();
  await svc?.close();
});

describe('hostile files fail at the parse stage with a clear error code', () => {
  it.each(CASES.map((c) => [c.title, c] as const))('%s', async (_, c) => {
    const doc = await terminal(ids.get(c.title) as string);
    expect(doc.status).toBe('failed');
    expect(doc.error).toMatchObject({ code: c.code, stage: 'parse', attempts: 1 });
    expect(doc.error?.message).toMatch(c.message);
    expect(doc.stats).toEqual({ chunks: 0, tokens: 0 });
    // Nothing of it is searchable or listed as chunks.
    const chunks = await svc.request('GET', `/api/v1/chunks/${doc.document_id}`);
    expect(chunks.status).toBe(200);
    expect(chunks.body.chunks).toEqual([]);
  });
});

describe('dead letters', () => {
  it('keeps every hostile upload event in the parse stage dead-letter topic, with its code', async () => {
    for (const id of ids.values()) await terminal(id);
    const { topics } = svc.runtime;
    const { log } = svc.runtime.ports;
    const letters: DeadLetter[] = [];
    const reader = await log.subscribe({
      groupId: `dlq-reader-${Date.now()}`,
      topics: [topics.deadLetter('parse')],
      fromBeginning: true,
      handler: async (m) => {
        letters.push(m.value as unknown as DeadLetter);
      },
    });
    try {
      const deadline = Date.now() + 10_000;
      while (letters.length < CASES.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await reader.stop();
    }
    const byDocument = new Map(letters.map((l) => [JSON.parse(l.payload).document_id as string, l]));
    for (const c of CASES) {
      const letter = byDocument.get(ids.get(c.title) as string);
      expect(letter, c.title).toMatchObject({
        stage: 'parse',
        source_topic: topics.uploaded,
        error_code: c.code,
        attempts: 1,
      });
    }
    expect(byDocument.has(normalId)).toBe(false);
  });
});

describe('everyone else is served meanwhile', () => {
  it('completes a normal document uploaded alongside and finds it', async () => {
    const doc = await terminal(normalId);
    expect(doc.status).toBe('completed');
    const res = await svc.request('POST', '/api/v1/search', { json: { query: 'tugboat teak', mode: 'keyword' } });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { document_id: string }) => r.document_id)).toEqual([normalId]);
  });

  it('stays ready and within bounded memory through all of it', async () => {
    for (const id of [...ids.values(), normalId]) await terminal(id);
    await stopMonitor();
    const final = await fetch(`${svc.url}/health/ready`);
    expect(final.status).toBe(200);
    expect(readiness.length).toBeGreaterThan(0);
    expect(readiness.filter((s) => s.status !== 200)).toEqual([]);
    const mb = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(0)} MB`;
    console.info(
      `hostile files: peak RSS ${mb(peakRss)} (${mb(baselineRss)} before the first upload), ` +
        `${readiness.length} readiness samples, all 200`,
    );
    expect(peakRss).toBeGreaterThan(0);
    expect(peakRss).toBeLessThan(RSS_LIMIT);
  });
});
