import { loadConfig } from '../../pipeline/config/config.ts';
import { isKbError } from '../../pipeline/errors/kb-error.ts';
import { COMMANDS, usage } from './commands/index.ts';

/** Entry point of `kb`: dispatches to a command; prints clear errors and exits non-zero on failure. */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 1;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`kb: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const config = loadConfig();
  return command.run(rest, { config, out: process.stdout, err: process.stderr });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = isKbError(error) || error instanceof Error ? error.message : String(error);
    process.stderr.write(`kb: ${message}\n`);
    process.exitCode = 1;
  },
);
