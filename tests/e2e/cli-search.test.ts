import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchView } from '../../core/model/response-views.model.ts';
import { kbResult } from '../../support/child-service.ts';
import { fixture } from '../fixtures/hostile-files.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/** `kb search` against a running embedded service, as text and as the API's JSON. */
let svc: TestService;
let env: Record<string, string>;
let before: string;
let pdfId: string;

beforeAll(async () => {
  svc = await startTestService();
  env = { KB_API_URL: svc.url, KB_KEY: svc.keys.search, KB_API_KEY: '' };
  before = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 20));
  const pdf = await svc.upload('multipage.pdf', fixture('multipage.pdf'), { type: 'application/pdf' });
  pdfId = pdf.body.document_id as string;
  const notes = await svc.upload(
    'meadow-notes.md',
    '# Meadow notes\n\nThe meadow census counted bumblebees on clover again this year, ' +
      'and the \u001b[31mred\u001b[0m marker posts were moved to the stone wall. '.repeat(6),
    { type: 'text/markdown', metadata: { team: 'field' } },
  );
  await svc.waitForStatus(pdfId, 'completed');
  await svc.waitForStatus(notes.body.document_id as string, 'completed');
}, 300_000);

afterAll(async () => {
  await svc?.close();
});

describe('kb search', { timeout: 120_000 }, () => {
  it('prints ranked passages with document name, version, page and score, wrapped to 80 columns off a terminal', async () => {
    const result = await kbResult(['search', 'bumblebee', 'meadow', 'census', '--mode', 'keyword'], env);
    expect(result.code, result.stderr).toBe(0);
    const first = result.stdout.split('\n')[0];
    expect(first).toMatch(/^1\. (multipage\.pdf · v1 · page 2|meadow-notes\.md · v1) · score \d\.\d{4}$/);
    expect(result.stdout).toContain('multipage.pdf · v1 · page 2 · score');
    expect(result.stdout).toContain('meadow-notes.md · v1 · score');
    expect(result.stdout).toMatch(/Bumblebees visited clover/);
    expect(result.stdout).toMatch(/\n\d+ results \(keyword, \d+ ms\)\.\n$/);
    for (const line of result.stdout.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    // A document's escape sequences are shown, not sent to the terminal.
    expect(result.stdout).not.toContain('\u001b');
    expect(result.stdout).toContain('\\u{1b}[31mred');
  });

  it('prints exactly the API answer with --json, and passes mode, limit, filter and as-of on', async () => {
    const result = await kbResult(
      [
        'search',
        'bumblebee census',
        '--mode',
        'hybrid',
        '--limit',
        '1',
        '--filter',
        '{"mime_types":["application/pdf"]}',
        '--json',
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as SearchView;
    const direct = await svc.request<SearchView>('POST', '/api/v1/search', {
      key: svc.keys.search,
      json: { query: 'bumblebee census', mode: 'hybrid', limit: 1, filters: { mime_types: ['application/pdf'] } },
    });
    expect(direct.status).toBe(200);
    expect({ ...printed, took_ms: 0 }).toEqual({ ...direct.body, took_ms: 0 });
    expect(printed.results).toHaveLength(1);
    expect(printed.results[0]).toMatchObject({ document_id: pdfId, version: 1, page: 2 });
    expect(result.stdout.trim().split('\n')).toHaveLength(1);

    const past = await kbResult(['search', 'bumblebee', '--as-of', before, '--json'], env);
    expect(past.code, past.stderr).toBe(0);
    expect(JSON.parse(past.stdout)).toMatchObject({ as_of: before, results: [] });
    const pastText = await kbResult(['search', 'bumblebee', '--as-of', before], env);
    expect(pastText.stdout).toBe(`No results (hybrid, as of ${before}).\n`);

    const filtered = await kbResult(
      ['search', 'bumblebee', '--filter', '{"metadata":{"team":"field"}}', '--json'],
      env,
    );
    const names = (JSON.parse(filtered.stdout) as SearchView).results.map((r) => r.document_name);
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names)).toEqual(new Set(['meadow-notes.md']));
  });

  it('says what is wrong with the command line (exit 2) and what the service refused', async () => {
    const cases: Array<{ args: string[]; says: RegExp; code: number; env?: Record<string, string> }> = [
      { args: ['search'], says: /give the text to search for/, code: 2 },
      { args: ['search', 'x', '--mode', 'fuzzy'], says: /--mode must be one of hybrid, semantic, keyword/, code: 2 },
      { args: ['search', 'x', '--limit', '0'], says: /--limit must be a whole number from 1 to 100/, code: 2 },
      { args: ['search', 'x', '--filter', '{team'], says: /--filter must be a JSON object.*not valid JSON/, code: 2 },
      { args: ['search', 'x', '--filter', '[1]'], says: /--filter must be a JSON object/, code: 2 },
      { args: ['search', 'x', '--as-of', 'yesterday'], says: /--as-of must be an ISO 8601 instant/, code: 2 },
      {
        args: ['search', 'x', '--filter', '{"colour":"red"}'],
        says: /the service refused the search: 422: .*filters\.colour is not an allowed field/,
        code: 2,
      },
      {
        args: ['search', 'x'],
        says: /needs an API key/,
        code: 2,
        env: { KB_API_URL: svc.url, KB_KEY: '', KB_API_KEY: '' },
      },
      { args: ['search', 'x'], says: /kb search: 403/, code: 1, env: { ...env, KB_KEY: svc.keys.write } },
      {
        args: ['search', 'x', '--url', 'http://127.0.0.1:9'],
        says: /cannot reach the service at http:\/\/127\.0\.0\.1:9/,
        code: 1,
      },
    ];
    const results = await Promise.all(cases.map((c) => kbResult(c.args, c.env ?? env)));
    cases.forEach((c, i) => {
      const result = results[i] as Awaited<ReturnType<typeof kbResult>>;
      const name = c.args.join(' ');
      expect(result.code, `${name}: ${result.stderr}`).toBe(c.code);
      expect(result.stderr, name).toMatch(c.says);
      expect(result.stdout, name).toBe('');
      if (c.code === 2) expect(result.stderr, name).toContain('Usage: kb search');
    });
  });
});
