import { isKbError } from '../../../core/errors/kb-error.ts';

/** Options a usage text mentions (`--name`), for suggestions. */
function optionsOf(usage: string): string[] {
  return [...new Set(usage.match(/--[a-z][a-z-]*/g) ?? [])];
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const current = row[j] as number;
      row[j] = Math.min(current + 1, (row[j - 1] as number) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] as number;
}

/** "Did you mean --x?" for an unknown option close to one the command takes, else empty. */
export function suggestOption(unknown: string, usage: string): string {
  const candidates = optionsOf(usage)
    .map((option) => ({ option, d: distance(unknown, option) }))
    .filter((c) => c.d <= Math.max(2, Math.floor(unknown.length / 3)))
    .sort((a, b) => a.d - b.d);
  return candidates[0] ? ` Did you mean ${candidates[0].option}?` : '';
}

/** Whether `error` is `node:util` parseArgs rejecting the command line. */
export function isUsageError(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

/** A command line the command cannot use: `kb` prints the message, then the usage, and exits 2. */
export class CommandLineError extends Error {
  override readonly name = 'CommandLineError';
}

/** Rethrows the service refusing a value given on the command line as a {@link CommandLineError}. */
export function refusedArgument(error: unknown): never {
  if (isKbError(error) && error.code === 'validation-error') throw new CommandLineError(error.message);
  throw error;
}
