import type { Command } from './command.ts';

/** One `kb` command: what its help says, and its implementation, loaded when it runs. */
export interface CommandEntry {
  /** One line, shown in `kb --help`. */
  readonly summary: string;
  /** The command line(s) it takes and its options, shown by `kb <command> --help` and after a usage error. */
  readonly usage: string;
  /** Imports the command's module. */
  load(): Promise<Command>;
}

export declare const COMMANDS: Readonly<Record<string, CommandEntry>>;
