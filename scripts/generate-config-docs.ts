/**
 * `npm run docs:config`: writes docs/configuration.md from the configuration catalogue
 * (core/config/config-variables.ts). With `--check`, writes nothing and exits 1 when the
 * committed page differs from what the catalogue gives.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { configurationPage } from '../core/config/config-docs.ts';

const target = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const page = configurationPage();
if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== page) {
    process.stderr.write(
      'docs/configuration.md differs from the configuration catalogue; run `npm run docs:config`.\n',
    );
    process.exitCode = 1;
  }
} else {
  await writeFile(target, page);
  process.stdout.write('Wrote docs/configuration.md from core/config/config-variables.ts.\n');
}
