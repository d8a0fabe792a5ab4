import { loadConfig } from '../../core/config/config.ts';
import { serviceVersion } from '../../core/runtime/runtime.ts';
import { exitQuietlyOnClosedPipe } from './commands/closed-pipe.ts';
import { oneLine } from './commands/command.ts';
import { reportFailuresOnStderr } from './commands/failure-report.ts';
import { CommandLineError, commandHelp, isUsageError, suggestOption } from './commands/help.ts';
import { COMMANDS, usage } from './commands/index.ts';

/** Entry point of `kb`: dispatches to a command; prints clear errors and exits non-zero on failure. */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`kb-document-service ${serviceVersion()}\n`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    const target = topic === undefined ? undefined : COMMANDS[topic];
    if (topic !== undefined && !target) {
      process.stderr.write(`kb: unknown command "${topic}"\n\n${usage()}`);
      return 2;
    }
    if (!name) {
      process.stderr.write(`kb: name a command.\n\n${usage()}`);
      return 2;
    }
    process.stdout.write(target && topic ? commandHelp(topic, target) : usage());
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`kb: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(commandHelp(name, command));
    return 0;
  }
  const config = loadConfig();
  try {
    return await command.run(rest, { config, out: process.stdout, err: process.stderr });
  } catch (error) {
    if (error instanceof CommandLineError) {
      process.stderr.write(`kb ${name}: ${oneLine(error.message)}\n\nUsage: ${command.usage}\n`);
      return 2;
    }
    if (!isUsageError(error)) throw error;
    const unknown = /'(-{1,2}[^']+)'/.exec(error.message)?.[1] ?? '';
    // parseArgs appends advice about positional arguments that does not apply here.
    const message = error.message.split('. To specify')[0]?.replace(/\.$/, '') ?? error.message;
    process.stderr.write(
      `kb ${name}: ${message}.${unknown ? suggestOption(unknown, command.usage) : ''}\n\nUsage: ${command.usage}\n`,
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
