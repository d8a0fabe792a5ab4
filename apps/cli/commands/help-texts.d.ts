import type { CommandEntry } from './command-registry.d.ts';

interface TextOut {
  write(text: string): unknown;
}

export declare function findCommand(name: string): CommandEntry | undefined;
export declare function usage(): string;
export declare function commandHelp(name: string, entry: CommandEntry): string;
export declare function answerWithoutLoading(argv: readonly string[], out: TextOut, err: TextOut): number | undefined;
