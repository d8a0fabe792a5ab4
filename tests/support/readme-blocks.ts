/**
 * The README's shell examples as a test runs them: the fenced blocks under a heading, each block's
 * commands (continuation lines joined) with the output lines the README shows after them
 * (`# {…}` or `# 204` comments), and a shown output turned into a pattern where `…` stands for
 * anything.
 */

export interface ReadmeBlock {
  readonly lang: string;
  readonly text: string;
}

/** The fenced code blocks of the section under `heading` (up to the next heading of the same or a higher level). */
export function blocksUnder(readme: string, heading: string): ReadmeBlock[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`The README has no heading "${heading}".`);
  const level = heading.indexOf(' ');
  const blocks: ReadmeBlock[] = [];
  let open: { lang: string; lines: string[] } | null = null;
  for (const line of lines.slice(start + 1)) {
    if (open) {
      if (line.startsWith('```')) {
        blocks.push({ lang: open.lang, text: open.lines.join('\n') });
        open = null;
      } else open.lines.push(line);
      continue;
    }
    const m = /^(#+) /.exec(line);
    if (m && (m[1] as string).length <= level) break;
    if (line.startsWith('```')) open = { lang: line.slice(3).trim(), lines: [] };
  }
  return blocks;
}

export interface ReadmeStep {
  /** One command as pasted (continuation lines joined with their backslash-newline). */
  readonly command: string;
  /** The output the README shows for it, one line each (`# ` removed, a trailing `(…)` remark dropped). */
  readonly shown: string[];
}

/** A line the README shows as output: `# {`, `# [` or `# ` and a number. */
const SHOWN = /^# (?:[{[]|\d)/;

/** The commands of a bash block, each with the output the README shows after it. Comment-only lines are left out. */
export function stepsOf(block: string): ReadmeStep[] {
  const steps: { command: string; shown: string[] }[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (pending) {
      pending += `\n${line}`;
      if (!line.endsWith('\\')) {
        steps.push({ command: pending, shown: [] });
        pending = '';
      }
      continue;
    }
    if (SHOWN.test(line)) {
      const last = steps.at(-1);
      if (!last) throw new Error(`Output shown before any command: ${line}`);
      last.shown.push(line.slice(2).replace(/\s{2,}\(.*\)$/, ''));
      continue;
    }
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    if (line.endsWith('\\')) pending = line;
    else steps.push({ command: line, shown: [] });
  }
  return steps;
}

/** A shown output line as a whole-line pattern: `…` matches anything, the rest literally. */
export function shownPattern(shown: string): RegExp {
  const literal = shown
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${literal}$`);
}
