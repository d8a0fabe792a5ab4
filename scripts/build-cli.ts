/**
 * `npm run build:cli` (run by `postinstall`): bundles the `kb` command (`apps/cli/kb.ts`) into
 * plain JavaScript under `dist/cli/`, so that a command starts without the TypeScript loader.
 * `bin/kb.js` runs the bundle only while it is current: every source file it was built from
 * still has the size and modification time recorded here (see `bin/prebuilt-cli.js`); otherwise
 * it runs the sources through tsx, as without a build.
 *
 * Packages stay outside the bundle (they load from node_modules, as they do from the sources),
 * and each command's dynamic imports stay chunks of their own, loaded when the command runs. A
 * source's `import.meta.url` is rewritten to the source file's own address, so the paths made
 * from it (schemas, package.json, the dashboard's files, the parse pool's worker threads, which
 * run the sources through tsx) are the same from the bundle.
 *
 * Each build goes to a folder of its own and the last few are kept, so a process started from an
 * earlier build can still load that build's chunks.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { BUILD_FILE } from '../bin/prebuilt-cli.js';

/** Earlier builds kept besides the new one. */
const KEEP_EARLIER = 2;

export interface CliBuild {
  /** The entry file of the new build. */
  readonly entry: string;
  /** How many source files it was built from. */
  readonly inputs: number;
}

/** Bundles `apps/cli/kb.ts` of the tree at `root` into `root/dist/cli/<build>/` and records its inputs. */
export async function buildCli(root: string): Promise<CliBuild> {
  const base = path.join(root, 'dist', 'cli');
  const id = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const outdir = path.join(base, id);
  mkdirSync(outdir, { recursive: true });
  const stamps: Stamps = new Map();
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['apps/cli/kb.ts'],
    outdir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    metafile: true,
    logLevel: 'warning',
    plugins: [sourceFiles(outdir, stamps)],
  });
  writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
  const inputs: Record<string, { size: number; mtimeMs: number }> = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    const file = path.join(root, input);
    const { size, mtimeMs } = stamps.get(file) ?? statSync(file);
    inputs[input] = { size, mtimeMs };
  }
  const entry = path.join(outdir, 'kb.js');
  // Written last and renamed into place: `bin/kb.js` sees the previous build or this one, whole.
  const record = path.join(base, BUILD_FILE);
  const temporary = `${record}.${id}`;
  writeFileSync(temporary, `${JSON.stringify({ entry: path.relative(base, entry), inputs })}\n`);
  renameSync(temporary, record);
  pruneEarlier(base, id);
  return { entry, inputs: Object.keys(inputs).length };
}

type Stamps = Map<string, { size: number; mtimeMs: number }>;

/**
 * Loads the project's source files (packages stay outside the bundle), noting each file's size
 * and mtime before reading it: a file changed while the build runs then counts as changed. Makes
 * `import.meta.url` in a source file mean that file, wherever its code lands in the bundle.
 */
function sourceFiles(outdir: string, stamps: Stamps): Plugin {
  return {
    name: 'source-files',
    setup(builder) {
      builder.onLoad({ filter: /\.(ts|js|mjs)$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const { size, mtimeMs } = statSync(args.path);
        stamps.set(args.path, { size, mtimeMs });
        const text = readFileSync(args.path, 'utf8');
        // Every output file sits directly in `outdir`, so one relative address fits all chunks.
        const relative = path.relative(outdir, args.path).split(path.sep).join('/');
        return {
          contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`),
          loader: args.path.endsWith('.ts') ? 'ts' : 'js',
          resolveDir: path.dirname(args.path),
        };
      });
    },
  };
}

/** Removes all builds but `current` and the newest `KEEP_EARLIER` before it. */
function pruneEarlier(base: string, current: string): void {
  const earlier = readdirSync(base, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== current)
    .map((entry) => ({ name: entry.name, mtimeMs: statSync(path.join(base, entry.name)).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of earlier.slice(KEEP_EARLIER)) rmSync(path.join(base, old.name), { recursive: true, force: true });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const started = performance.now();
  const built = await buildCli(root);
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`kb: built ${path.relative(root, built.entry)} from ${built.inputs} source files in ${ms} ms\n`);
}
