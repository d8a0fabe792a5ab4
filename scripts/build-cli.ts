/**
 * `npm run build:cli` (run by `postinstall`): bundles the `kb` command (`apps/cli/kb.ts`) into
 * plain JavaScript under `dist/cli/`, so that a command starts without the TypeScript loader.
 * `bin/kb.js` runs the bundle only while it is current: every source file it was built from
 * still has the size and modification time recorded here (see `bin/prebuilt-cli.js`); otherwise
 * it runs the sources through tsx, as without a build.
 *
 * Packages but TypeBox (see `BUNDLED_PACKAGES`) stay outside the bundle: they load from
 * node_modules, as they do from the sources. Each command's dynamic imports stay chunks of their
 * own, loaded when the command runs. A source's `import.meta.url` is rewritten to the source
 * file's own address, so the paths made from it (schemas, package.json, the dashboard's files, the
 * parse pool's worker threads, which run the sources through tsx) are the same from the bundle.
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
  /** How many files the build's record checks (its source files, a bundled package's package.json). */
  readonly inputs: number;
}

/** Bundles `apps/cli/kb.ts` of the tree at `root` into `root/dist/cli/<build>/` and records its inputs. */
export async function buildCli(root: string): Promise<CliBuild> {
  const base = path.join(root, 'dist', 'cli');
  const id = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const outdir = path.join(base, id);
  mkdirSync(outdir, { recursive: true });
  const stamps: Stamps = new Map();
  const result = await bundle(root, outdir, stamps).catch((error: unknown) => {
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  });
  writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
  const inputs: Record<string, { size: number; mtimeMs: number }> = {};
  for (const input of new Set(Object.keys(result.metafile.inputs).map(packageFileOf))) {
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

/** esbuild's bundle of `apps/cli/kb.ts`, with its metafile. */
function bundle(root: string, outdir: string, stamps: Stamps) {
  return build({
    absWorkingDir: root,
    entryPoints: ['apps/cli/kb.ts'],
    outdir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    metafile: true,
    logLevel: 'warning',
    plugins: [packagesOutside(), sourceFiles(outdir, stamps)],
  });
}

/**
 * Packages bundled in, not loaded from node_modules: TypeBox, which the configuration loads for every
 * command that reads it, is some 250 small ES modules, and resolving and loading each one took
 * 0.3–0.5 s on a busy machine against 0.03–0.07 s for the same code bundled. Only types and plain
 * JSON schemas cross from it to other packages (the API validates with Ajv), so a second copy of it
 * in node_modules does no harm. Its `package.json` stands for it in the build's record.
 */
const BUNDLED_PACKAGES = ['@sinclair/typebox'];

/** Every other package stays outside the bundle (as esbuild's `packages: 'external'`). */
function packagesOutside(): Plugin {
  return {
    name: 'packages-outside',
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, (args) => {
        const bundled = BUNDLED_PACKAGES.some((name) => args.path === name || args.path.startsWith(`${name}/`));
        return bundled ? undefined : { path: args.path, external: true };
      });
    },
  };
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

/**
 * What stands for an input in the record: a source file itself; for a bundled package's file, the
 * package's `package.json` (npm rewrites it with every install or upgrade of the package), so that
 * checking the build costs one `stat` per source file and one per bundled package.
 */
function packageFileOf(input: string): string {
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return input;
  const name = parts[at + 1]?.startsWith('@') ? 2 : 1;
  return [...parts.slice(0, at + 1 + name), 'package.json'].join('/');
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
  process.stdout.write(
    `kb: built ${path.relative(root, built.entry)} (${built.inputs} files checked at each start) in ${ms} ms\n`,
  );
}
