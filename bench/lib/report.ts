/** Result rows, the printed table and the JSON file. */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Summary, summarize } from './stats.ts';

export type RuntimeName = 'embedded' | 'distributed';

export interface Figure {
  readonly name: string;
  readonly unit: string;
  /** One value per round (or per query, where the figure says so). */
  readonly values: number[];
  readonly summary: Summary;
  /** The goal this figure is judged against, if any. */
  goal?: Goal;
}

export interface Goal {
  /** The goal as stated, e.g. `≥ 0.90`. */
  readonly text: string;
  /** Null when the goal could not be judged (e.g. no rounds completed). */
  readonly met: boolean | null;
  /** The figure the goal was judged on and its median. */
  readonly detail: string;
}

export interface Row {
  readonly scenario: string;
  readonly runtime: RuntimeName;
  readonly size: string;
  readonly figures: Figure[];
  readonly notes: string[];
  skipped: string | null;
}

export function createRow(scenario: string, runtime: RuntimeName, size: string): Row {
  return { scenario, runtime, size, figures: [], notes: [], skipped: null };
}

export function addFigure(row: Row, name: string, unit: string, values: number[]): Figure {
  const figure = { name, unit, values, summary: summarize(values) };
  row.figures.push(figure);
  return figure;
}

/** Judges `figure`'s median against a bound: `atLeast` (≥) or `atMost` (≤). */
export function judge(figure: Figure, bound: { atLeast?: number; atMost?: number }): Figure {
  const value = figure.summary.median;
  const text = bound.atLeast !== undefined ? `≥ ${bound.atLeast}` : `≤ ${bound.atMost}`;
  const met = Number.isNaN(value)
    ? null
    : bound.atLeast !== undefined
      ? value >= bound.atLeast
      : value <= (bound.atMost as number);
  figure.goal = { text, met, detail: `median ${format(value)}` };
  return figure;
}

/** Every goal of the rows with its verdict. */
export function goals(rows: readonly Row[]): Array<{ row: Row; figure: Figure; goal: Goal }> {
  return rows.flatMap((row) =>
    row.figures.flatMap((figure) => (figure.goal ? [{ row, figure, goal: figure.goal }] : [])),
  );
}

export function format(value: number): string {
  if (Number.isNaN(value)) return '–';
  if (Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toFixed(0);
  if (abs >= 100) return value.toFixed(1);
  if (abs >= 10) return value.toFixed(2);
  return value.toFixed(3);
}

function goalCell(figure: Figure): string {
  if (!figure.goal) return '';
  const mark = figure.goal.met === null ? 'not judged' : figure.goal.met ? 'met' : 'MISSED';
  return `${figure.goal.text}: ${mark}`;
}

/** The one table: a line per figure, the scenario's goal on its first line, notes as footnotes. */
export function renderTable(rows: readonly Row[]): string {
  const header = ['scenario', 'runtime', 'size', 'figure', 'unit', 'min', 'median', 'max', 'n', 'goal'];
  const lines: string[][] = [];
  const footnotes: string[] = [];
  for (const row of rows) {
    const marks: string[] = [];
    for (const note of row.notes) {
      footnotes.push(note);
      marks.push(`[${footnotes.length}]`);
    }
    const scenario = `${row.scenario}${marks.length ? ` ${marks.join('')}` : ''}`;
    if (row.skipped) {
      footnotes.push(row.skipped);
      lines.push([`${scenario} [${footnotes.length}]`, row.runtime, row.size, '–', '', '', '', '', '', 'skipped']);
      continue;
    }
    row.figures.forEach((f, i) => {
      lines.push([
        i === 0 ? scenario : '',
        i === 0 ? row.runtime : '',
        i === 0 ? row.size : '',
        f.name,
        f.unit,
        format(f.summary.min),
        format(f.summary.median),
        format(f.summary.max),
        String(f.values.length),
        goalCell(f),
      ]);
    });
  }
  const widths = header.map((h, c) => Math.max(h.length, ...lines.map((l) => (l[c] ?? '').length)));
  const fmt = (cells: readonly string[]) =>
    cells.map((cell, c) => (c >= 5 && c <= 8 ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0))).join('  ');
  const out = [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)];
  if (footnotes.length > 0) out.push('', ...footnotes.map((note, i) => `[${i + 1}] ${note}`));
  return out.join('\n');
}

/** Markdown version of the table and its notes, for the README. */
export function renderMarkdown(rows: readonly Row[]): string {
  const out = [
    '| scenario | runtime | size | figure | min | median | max | goal |',
    '|---|---|---|---|---:|---:|---:|---|',
  ];
  const notes: string[] = [];
  for (const row of rows) {
    const marks = row.notes.map((note) => {
      notes.push(note);
      return `<sup>${notes.length}</sup>`;
    });
    const scenario = `${row.scenario}${marks.join('')}`;
    if (row.skipped) {
      out.push(`| ${scenario} | ${row.runtime} | ${row.size} | – | | | | skipped: ${row.skipped} |`);
      continue;
    }
    row.figures.forEach((f, i) => {
      const cells = [
        i === 0 ? scenario : '',
        i === 0 ? row.runtime : '',
        i === 0 ? row.size : '',
        `${f.name} (${f.unit})`,
        format(f.summary.min),
        format(f.summary.median),
        format(f.summary.max),
        goalCell(f),
      ];
      out.push(`| ${cells.join(' | ')} |`);
    });
  }
  if (notes.length > 0) out.push('', ...notes.map((note, i) => `${i + 1}. ${note}`));
  return out.join('\n');
}

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly os: string;
  readonly loadAverage: number[];
}

export function machine(): Machine {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export async function writeResults(file: string, results: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
}
