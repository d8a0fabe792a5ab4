/**
 * Bulk ingest: `kb ingest` (the CLI, as a child process) over a folder of small files against the
 * embedded runtime: a first run uploads every file; a second, unchanged run (goal ≤ 5 % of the
 * first's time, no upload); a run after 20 files changed (exactly 20 new versions). The pipeline
 * stages are not started: what is timed is the command (hashing, looking up, uploading), not the
 * ingestion the other rows measure.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { passage } from '../corpus.ts';
import type { BenchContext } from '../lib/context.ts';
import { createRandom } from '../lib/random.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { startInProcess } from '../lib/service.ts';
import type { Target } from '../lib/target.ts';

const run = promisify(execFile);
const KB_BIN = path.resolve(import.meta.dirname, '..', '..', 'bin', 'kb.js');
const CHANGED = 20;

interface IngestReport {
  readonly skipped: number;
  readonly created: number;
  readonly updated: number;
  readonly failed: number;
}

export async function bulkIngestScenario(ctx: BenchContext, target: Target, files: number): Promise<Row> {
  const row = createRow('bulk ingest', target.runtime, `${files} files`);
  if (target.runtime !== 'embedded') {
    row.skipped = 'embedded runtime only';
    return row;
  }
  const fresh = await target.fresh();
  // No stage runs here, so every created version stays queued: without lifting the backlog bounds
  // the run after the changes would wait on 429s at the default 2,000 instead of timing the command.
  const instance = { ...fresh, config: { ...fresh.config, backlog: { maxPerWorkspace: 0, maxTotal: 0 } } };
  const root = await mkdtemp(path.join(os.tmpdir(), 'kb-bench-bulk-'));
  const service = await startInProcess(instance);
  try {
    const key = service.keys[0] as string;
    const folder = path.join(root, 'handbook');
    const rng = createRandom(ctx.options.seed);
    const texts: string[] = [];
    for (let i = 0; i < files; i++) {
      const sub = path.join(folder, `part-${String(i % 20).padStart(2, '0')}`);
      await mkdir(sub, { recursive: true });
      texts.push(`# Note ${i}\n\n${passage(rng)}\n`);
      await writeFile(path.join(sub, `note-${String(i).padStart(5, '0')}.md`), texts[i] as string);
    }
    const ingest = async (label: string): Promise<{ seconds: number; report: IngestReport }> => {
      ctx.progress(`bulk ingest: ${label}`);
      const started = performance.now();
      const { stdout } = await run(
        process.execPath,
        [KB_BIN, 'ingest', folder, '--url', service.url, '--key', key, '--concurrency', '8', '--json'],
        { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KB_API_KEY: '', KB_KEY: '' } },
      );
      return { seconds: (performance.now() - started) / 1000, report: JSON.parse(stdout) as IngestReport };
    };

    // The command's own start (loading it, reading an empty folder): what every run pays before any work.
    const empty = path.join(root, 'empty');
    await mkdir(empty);
    const startedEmpty = performance.now();
    await run(process.execPath, [KB_BIN, 'ingest', empty, '--url', service.url, '--key', key], {
      env: { ...process.env, KB_API_KEY: '', KB_KEY: '' },
    }).catch(() => undefined);
    addFigure(row, 'kb ingest start (empty folder)', 's', [(performance.now() - startedEmpty) / 1000]);

    const first = await ingest(`first run over ${files} files`);
    addFigure(row, 'first run', 's', [first.seconds]);
    if (first.report.created !== files) row.notes.push(`the first run created ${first.report.created} of ${files}`);

    const second = await ingest('unchanged second run');
    addFigure(row, 'unchanged second run', 's', [second.seconds]);
    judge(addFigure(row, 'unchanged run ÷ first run', '%', [(100 * second.seconds) / first.seconds]), { atMost: 5 });
    judge(addFigure(row, 'uploads by the unchanged run', 'files', [second.report.created + second.report.updated]), {
      atMost: 0,
    });

    for (let i = 0; i < CHANGED; i++) {
      const index = Math.floor((i * files) / CHANGED);
      const sub = path.join(folder, `part-${String(index % 20).padStart(2, '0')}`);
      await writeFile(
        path.join(sub, `note-${String(index).padStart(5, '0')}.md`),
        `${texts[index]}\nA revised line, ${i}.\n`,
      );
    }
    const third = await ingest(`run after ${CHANGED} files changed`);
    addFigure(row, `run after ${CHANGED} files changed`, 's', [third.seconds]);
    const newVersions = addFigure(row, 'new versions by that run', 'versions', [third.report.updated]);
    newVersions.goal = {
      text: `= ${CHANGED}`,
      met: third.report.updated === CHANGED && third.report.created === 0 && third.report.failed === 0,
      detail: `${third.report.updated} updated, ${third.report.created} created, ${third.report.skipped} skipped`,
    };
    row.notes.push('one round; kb ingest as a child process, 8 uploads in flight; pipeline stages not started');
    return row;
  } finally {
    await service.close();
    await instance.cleanup();
    await rm(root, { recursive: true, force: true });
  }
}
