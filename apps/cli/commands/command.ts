import type { Writable } from 'node:stream';
import type { ClientConfig } from '../../../core/config/client-config.ts';
import type { Config } from '../../../core/config/config.ts';
import { escapeForDisplay } from '../../../core/util/display-text.ts';

export interface CommandContext {
  /** Where the service is and the key to send: all a command that talks to it over HTTP needs. */
  readonly client: ClientConfig;
  /**
   * The whole validated configuration, loaded on the first call (its schema takes a few hundred
   * milliseconds to load, which commands that only call the API do not pay).
   */
  readonly loadConfig: () => Promise<Config>;
  readonly out: Writable;
  readonly err: Writable;
  /** The command's usage text (from `command-registry.js`), for messages about a wrong command line. */
  readonly usage: string;
}

/** What a `kb` command does; its summary and usage live in `command-registry.js`. */
export interface Command {
  /** Returns the exit code; a command that serves resolves only when the service stops. */
  run(args: string[], ctx: CommandContext): Promise<number>;
}

/**
 * Writes `text` and a line break. Control characters and bidirectional overrides in it (a stored
 * name or description may hold them, from before they were refused) are shown as `\uXXXX`, so
 * they can neither drive the terminal nor reorder the line; line breaks stay.
 */
export function print(stream: Writable, text: string): void {
  const shown = escapeForDisplay(text);
  stream.write(shown.endsWith('\n') ? shown : `${shown}\n`);
}

/** A stored value inside one line of text: every control character escaped, line breaks too. */
export const oneLine = (value: string): string => escapeForDisplay(value, { oneLine: true });

/** Left-aligned text table; cells are shown as {@link oneLine} (a line break would break the row). */
export function table(cells: readonly (readonly string[])[]): string {
  const rows = cells.map((row) => row.map(oneLine));
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return `${rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/**
 * After the first signal: gives the shutdown `graceMs` (then exits anyway, saying so) and makes a
 * second SIGINT/SIGTERM exit at once, saying so. Unfinished pipeline work is redelivered after a
 * restart either way (its events were never committed). `exit` is for tests.
 */
export function boundShutdown(
  err: Writable,
  first: NodeJS.Signals,
  graceMs: number,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  const timer = setTimeout(() => {
    print(
      err,
      `Shutdown did not finish within ${graceMs} ms; exiting now. Unfinished ingestion work is delivered again after a restart.`,
    );
    exit(1);
  }, graceMs);
  timer.unref();
  const again = (signal: NodeJS.Signals) => {
    print(
      err,
      `Received ${signal} again during shutdown (after ${first}); exiting at once. Unfinished ingestion work is delivered again after a restart.`,
    );
    exit(130);
  };
  process.once('SIGINT', again);
  process.once('SIGTERM', again);
}

/** Resolves on SIGINT/SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
