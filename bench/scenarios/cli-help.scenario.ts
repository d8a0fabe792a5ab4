/**
 * `cli, help`: `kb --help` and `kb <command> --help` timed as whole processes (the start of node
 * included), beside `node -e 0` timed in the same loop, the floor any command line has. Help is
 * answered from plain JavaScript before the TypeScript loader or any of the application loads.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { COMMANDS } from '../../apps/cli/commands/command-registry.js';
import type { BenchContext } from '../lib/context.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { REPO_ROOT } from '../lib/target.ts';

const RUNS = 10;
const KB_BIN = path.join(REPO_ROOT, 'bin', 'kb.js');

/** Milliseconds from spawning `node <args>` until it exited (output read to the end). */
async function timed(args: readonly string[]): Promise<number> {
  const started = performance.now();
  await promisify(execFile)(process.execPath, args, { cwd: REPO_ROOT });
  return performance.now() - started;
}

export async function cliHelp(ctx: BenchContext): Promise<Row> {
  const row = createRow('cli, help', 'embedded', `${RUNS} runs`);
  const names = Object.keys(COMMANDS);
  const node: number[] = [];
  const help: number[] = [];
  const ingestHelp: number[] = [];
  const everyCommand: number[] = [];
  ctx.progress(`cli, help: ${RUNS} runs of node -e 0, kb --help, kb ingest --help and kb <command> --help`);
  for (let run = 0; run < RUNS; run++) {
    // Interleaved, so a change in the machine's load reaches every figure alike.
    node.push(await timed(['-e', '0']));
    help.push(await timed([KB_BIN, '--help']));
    ingestHelp.push(await timed([KB_BIN, 'ingest', '--help']));
    const name = names[run % names.length] as string;
    everyCommand.push(await timed([KB_BIN, name, '--help']));
  }
  addFigure(row, 'node -e 0 (the start of node alone)', 'ms', node);
  judge(addFigure(row, 'kb --help', 'ms', help), { atMost: 300 });
  addFigure(
    row,
    'kb --help beyond the start of node (same run)',
    'ms',
    help.map((ms, i) => ms - (node[i] as number)),
  );
  judge(addFigure(row, 'kb ingest --help', 'ms', ingestHelp), { atMost: 300 });
  judge(addFigure(row, 'kb <command> --help, a command a run', 'ms', everyCommand), { atMost: 300 });
  row.notes.push(
    `whole processes, spawned one after another; the commands taken in turn: ${names.slice(0, RUNS).join(', ')}`,
  );
  return row;
}
