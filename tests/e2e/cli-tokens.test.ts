import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kbResult } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/** `kb tokens create` against a running embedded service: the token it prints searches only within its rules. */
let svc: TestService;
let env: Record<string, string>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  svc = await startTestService();
  env = { KB_API_URL: svc.url, KB_KEY: svc.keys.all, KB_API_KEY: '' };
  for (const customer of ['acme', 'globex']) {
    const up = await svc.upload(`${customer}.md`, `Invoices of ${customer}: the overdue invoice reminder.`, {
      type: 'text/markdown',
      metadata: { customer },
    });
    ids[customer] = up.body.document_id as string;
    await svc.waitForStatus(ids[customer] as string, 'completed');
  }
}, 300_000);

afterAll(async () => {
  await svc?.close();
});

describe('kb tokens create', { timeout: 120_000 }, () => {
  it('prints a token that searches only what its rules let through', async () => {
    const result = await kbResult(
      [
        'tokens',
        'create',
        '--expires-in',
        '600',
        '--permissions',
        'search',
        '--filter',
        '{"metadata":{"customer":"acme"}}',
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const token = result.stdout.trim();
    expect(token.split('.')).toHaveLength(3);
    expect(result.stderr).toMatch(/^Scoped token \(search\) of key .+, valid until \d{4}-/);
    const found = await svc.request('POST', '/api/v1/search', {
      key: token,
      json: { query: 'overdue invoice', mode: 'keyword' },
    });
    expect(found.status).toBe(200);
    expect(found.body.results.map((r: { document_id: string }) => r.document_id)).toEqual([ids.acme]);
  });

  it('prints the API answer with --json', async () => {
    const result = await kbResult(['tokens', 'create', '--expires-in', '60', '--sources', 'upload', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ token_type: 'Bearer', sources: ['upload'] });
  });

  it('exits 2 for a value the command line or the service refuses', async () => {
    for (const args of [
      ['tokens', 'create'],
      ['tokens', 'create', '--expires-in', 'soon'],
      ['tokens', 'create', '--expires-in', '60', '--filter', '[1]'],
      ['tokens', 'create', '--expires-in', '99999999'],
      ['tokens', 'create', '--expires-in', '60', '--permissions', 'write'],
    ]) {
      const result = await kbResult(args, env);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
    }
  });
});
