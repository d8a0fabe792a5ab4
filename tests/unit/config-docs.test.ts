import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../core/config/config.ts';
import { configurationPage } from '../../core/config/config-docs.ts';
import { REPO_ROOT } from '../../support/child-service.ts';

const page = () => readFile(path.join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');

describe('docs/configuration.md', () => {
  it('is exactly what `npm run docs:config` writes from the catalogue (run it after changing a variable)', async () => {
    expect(await page()).toBe(configurationPage());
  });

  it('lists every variable of the catalogue with its default and description', async () => {
    const text = await page();
    for (const v of CONFIG_VARIABLES) {
      expect(text).toContain(
        `| \`${v.name}\` | ${v.default === '' ? '(empty)' : `\`${v.default}\``} | ${v.description} |`,
      );
    }
  });

  it('`docs:config --check` agrees: exit 0 on the committed page', async () => {
    const run = promisify(execFile);
    const { stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/generate-config-docs.ts', '--check'], {
      cwd: REPO_ROOT,
    });
    expect(stderr).toBe('');
  });
});
