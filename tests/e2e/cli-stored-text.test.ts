/**
 * The CLI prints names and descriptions stored before control characters and bidirectional
 * overrides were refused with those characters escaped (`\u202E`): they neither drive the terminal
 * nor reorder the line, and `--json` output stays JSON of the same values.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kbResult } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/** A right-to-left override, NUL, and an escape sequence that would clear the screen. */
const SOURCE_NAME = 'report\u202Etxt.exe\u0000\u001b[2J';
const SHOWN_SOURCE_NAME = 'report\\u202Etxt.exe\\u0000\\u001B[2J';
const DESCRIPTION = 'hooks\u202E\u2066 for ops';
const KEY_NAME = 'ci\u001b]0;owned\u0007\u009b';
const SHOWN_KEY_NAME = 'ci\\u001B]0;owned\\u0007\\u009B';
/** Any of them raw, line breaks aside (the output's own). */
const RAW = /[\p{Cc}\u2028-\u202e\u2066-\u2069]/u;
const hasRaw = (output: string) => RAW.test(output.replaceAll('\n', ''));

let svc: TestService;
let cli: Record<string, string>;
const sourceId = randomUUID();
const keyWorkspace = `display-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  svc = await startTestService({ stages: 'none' });
  const now = new Date().toISOString();
  // Older data, written straight to the stores as a previous version of the service accepted it.
  await svc.runtime.ports.sources.createSource({
    id: sourceId,
    workspaceId: svc.workspaceId,
    name: SOURCE_NAME,
    kind: 'web',
    location: { urls: ['http://127.0.0.1:9/page\u202Emd'] },
    include: [],
    exclude: ['drafts\u001b/**'],
    metadata: { team: 'ops\u202E' },
    schedule: null,
    createdAt: now,
    updatedAt: now,
  });
  await svc.runtime.ports.webhooks.createEndpoint({
    id: randomUUID(),
    workspaceId: svc.workspaceId,
    url: 'http://127.0.0.1:9/hook',
    events: ['*'],
    description: DESCRIPTION,
    secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    enabled: true,
    disabledReason: null,
    failingSinceMs: null,
    createdAtMs: Date.now(),
    updatedAtMs: Date.now(),
  });
  await svc.runtime.ports.accountStore.createKey({
    id: randomUUID(),
    name: KEY_NAME,
    prefix: 'ink_00000000',
    hash: randomBytes(32).toString('hex'),
    workspaceId: keyWorkspace,
    permissions: ['read'],
    plan: 'starter',
    createdAt: now,
    revokedAt: null,
    lastUsedAt: null,
  });
  cli = { KB_API_URL: svc.url, KB_KEY: svc.keys.all, KB_DATA_DIR: svc.dataDir, KB_LOG_LEVEL: 'silent' };
}, 60_000);
afterAll(async () => {
  await svc?.close();
});

describe('the CLI shows stored names escaped', () => {
  it('kb sources list, show and list --json', async () => {
    const list = await kbResult(['sources', 'list'], cli);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(SHOWN_SOURCE_NAME);
    expect(hasRaw(list.stdout)).toBe(false);

    const shown = await kbResult(['sources', 'show', sourceId], cli);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`${SHOWN_SOURCE_NAME} (web, id ${sourceId})`);
    expect(shown.stdout).toContain('location:  http://127.0.0.1:9/page\\u202Emd');
    expect(shown.stdout).toContain('exclude:   drafts\\u001B/**');
    expect(hasRaw(shown.stdout)).toBe(false);

    const json = await kbResult(['sources', 'list', '--json'], cli);
    expect(hasRaw(json.stdout)).toBe(false);
    expect(JSON.parse(json.stdout)[0]).toMatchObject({ name: SOURCE_NAME, metadata: { team: 'ops\u202E' } });
  }, 180_000);

  it('kb webhooks list --json', async () => {
    const json = await kbResult(['webhooks', 'list', '--json'], cli);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).toContain('hooks\\u202E\\u2066 for ops');
    expect(hasRaw(json.stdout)).toBe(false);
    expect(JSON.parse(json.stdout)[0].description).toBe(DESCRIPTION);
  }, 180_000);

  it('kb keys list', async () => {
    const list = await kbResult(['keys', 'list', '--workspace', keyWorkspace], cli);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(SHOWN_KEY_NAME);
    expect(hasRaw(list.stdout)).toBe(false);
  }, 180_000);
});
