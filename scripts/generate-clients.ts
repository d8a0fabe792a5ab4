/**
 * `npm run clients:generate`: regenerates both clients in `clients/` from the service's OpenAPI
 * document, so they follow every route and schema change:
 *
 * 1. `clients/openapi.json`: the document `GET /openapi.json` answers (without the `/v1/…` aliases,
 *    which are the same operations under a second prefix);
 * 2. `clients/typescript/src/schema.ts`: its types, by openapi-typescript; then the package is
 *    compiled into `clients/typescript/dist/` (with TypeScript 5, which openapi-typescript needs);
 * 3. `clients/python/kb_client/_generated/`: the Python client, by openapi-python-client.
 *
 * The generators are pinned in `tools/clients/` (package.json and its lock; requirements.txt) and
 * installed on first use into `tools/clients/node_modules/` and `.venv-clients/`. The hand-written
 * layers (`clients/typescript/src/index.ts`, `clients/python/kb_client/__init__.py`) are not touched.
 *
 * `--out <dir>` writes into a copy of `clients/` at `<dir>` instead (a test compares it with the
 * committed clients); `--install-only` installs the generators and stops (CI).
 */
import { execFile } from 'node:child_process';
import { access, cp, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openApiDocument } from './write-openapi.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOOLS = path.join(ROOT, 'tools', 'clients');
const VENV = path.join(ROOT, '.venv-clients');
const bin = {
  openapiTypescript: path.join(TOOLS, 'node_modules', '.bin', 'openapi-typescript'),
  tsc: path.join(TOOLS, 'node_modules', '.bin', 'tsc'),
  python: path.join(VENV, 'bin', 'python'),
  openapiPythonClient: path.join(VENV, 'bin', 'openapi-python-client'),
};

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

async function step(
  what: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
  try {
    await run(command, args, {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? process.env,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${what} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** Installs the pinned generators when they are missing (idempotent). */
export async function installGenerators(log: (line: string) => void = () => {}): Promise<void> {
  if (!(await exists(bin.openapiTypescript)) || !(await exists(bin.tsc))) {
    log('installing openapi-typescript and TypeScript 5 into tools/clients/node_modules (first use)');
    await step('npm install in tools/clients', 'npm', ['install', '--no-audit', '--no-fund', '--no-save'], {
      cwd: TOOLS,
    });
  }
  if (!(await exists(bin.openapiPythonClient))) {
    log('installing openapi-python-client into .venv-clients (first use)');
    await step('python3 -m venv', 'python3', ['-m', 'venv', VENV]);
    await step('pip install', bin.python, [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '-r',
      path.join(TOOLS, 'requirements.txt'),
    ]);
  }
}

/** The document the clients are generated from: the API's, without the `/v1/…` aliases. */
export async function clientDocument(): Promise<Record<string, unknown>> {
  const doc = await openApiDocument();
  const paths = doc.paths as Record<string, unknown>;
  doc.paths = Object.fromEntries(Object.entries(paths).filter(([p]) => !p.startsWith('/v1/')));
  return doc;
}

/** Regenerates the generated parts of both clients under `outDir` (a `clients/` folder). */
export async function generateClients(outDir: string, log: (line: string) => void = () => {}): Promise<void> {
  await installGenerators(log);
  const spec = path.join(outDir, 'openapi.json');
  await writeFile(spec, `${JSON.stringify(await clientDocument(), null, 2)}\n`);
  log('wrote openapi.json');

  const ts = path.join(outDir, 'typescript');
  await step('openapi-typescript', bin.openapiTypescript, [spec, '--output', path.join(ts, 'src', 'schema.ts')]);
  await rm(path.join(ts, 'dist'), { recursive: true, force: true });
  await step('tsc (TypeScript client)', bin.tsc, ['-p', path.join(ts, 'tsconfig.json')]);
  log('generated typescript/src/schema.ts and compiled typescript/dist');

  const generated = path.join(outDir, 'python', 'kb_client', '_generated');
  await rm(generated, { recursive: true, force: true });
  await step(
    'openapi-python-client',
    bin.openapiPythonClient,
    [
      'generate',
      '--path',
      spec,
      '--config',
      path.join(TOOLS, 'openapi-python-client.yaml'),
      '--meta',
      'none',
      '--output-path',
      generated,
    ],
    // Its post-hooks run ruff, installed beside it.
    { env: { ...process.env, PATH: `${path.join(VENV, 'bin')}${path.delimiter}${process.env.PATH ?? ''}` } },
  );
  // ruff leaves its cache in the folder it formatted.
  await rm(path.join(generated, '.ruff_cache'), { recursive: true, force: true });
  log('generated python/kb_client/_generated');
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv.includes('--install-only')) {
  await installGenerators((line) => process.stdout.write(`${line}\n`));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--out');
  const clients = path.join(ROOT, 'clients');
  let outDir = clients;
  if (at >= 0) {
    outDir = path.resolve(process.argv[at + 1] ?? '');
    await rm(outDir, { recursive: true, force: true });
    await mkdir(path.dirname(outDir), { recursive: true });
    await cp(clients, outDir, { recursive: true });
  }
  await generateClients(outDir, (line) => process.stdout.write(`${line}\n`));
}
