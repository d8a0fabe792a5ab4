import { loadClientConfig } from '../../core/config/client-config.ts';
import type { Config } from '../../core/config/config.ts';
import { exitQuietlyOnClosedPipe } from './commands/closed-pipe.ts';
import { oneLine } from './commands/command.ts';
import type { CommandEntry } from './commands/command-registry.js';
import { reportFailuresOnStderr } from './commands/failure-report.ts';
import { CommandLineError, isUsageError, suggestOption } from './commands/help.ts';
import { answerWithoutLoading, findCommand } from './commands/help-texts.js';

/**
 * Entry point of `kb`: answers help itself, else loads the named command and runs it; prints
 * clear errors and exits non-zero on failure. (`bin/kb.js` answers help before loading this.)
 */
async function main(argv: string[]): Promise<number> {
  const answered = answerWithoutLoading(argv, process.stdout, process.stderr);
  if (answered !== undefined) return answered;
  const [name, ...rest] = argv as [string, ...string[]];
  // Known: answerWithoutLoading answers an unknown command.
  const entry = findCommand(name) as CommandEntry;
  const client = loadClientConfig();
  let config: Promise<Config> | undefined;
  const loadConfig = () => {
    config ??= import('../../core/config/config.ts').then(({ loadConfig }) => loadConfig());
    return config;
  };
  const command = await entry.load();
  try {
    return await command.run(rest, {
      client,
      loadConfig,
      out: process.stdout,
      err: process.stderr,
      usage: entry.usage,
    });
  } catch (error) {
    if (error instanceof CommandLineError) {
      process.stderr.write(`kb ${name}: ${oneLine(error.message)}\n\nUsage: ${entry.usage}\n`);
      return 2;
    }
    if (!isUsageError(error)) throw error;
    const unknown = /'(-{1,2}[^']+)'/.exec(error.message)?.[1] ?? '';
    // parseArgs appends advice about positional arguments that does not apply here.
    const message = error.message.split('. To specify')[0]?.replace(/\.$/, '') ?? error.message;
    process.stderr.write(
      `kb ${name}: ${message}.${unknown ? suggestOption(unknown, entry.usage) : ''}\n\nUsage: ${entry.usage}\n`,
    );
    return 2;
  }
}

// `kb … | head`: when the reader goes away, stop quietly instead of dying on EPIPE.
exitQuietlyOnClosedPipe(process.stdout);
exitQuietlyOnClosedPipe(process.stderr);
const failures = reportFailuresOnStderr();

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => failures.fail(error),
);
