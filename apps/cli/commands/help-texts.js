/**
 * What `kb` answers without loading the application: its usage, the help of one command, its
 * version, and the usage after an unknown command. Plain JavaScript importing only the command
 * registry and `node:fs`, so that `bin/kb.js` answers these before the TypeScript loader starts.
 * `help-texts.d.ts` gives its types.
 */
import { readFileSync } from 'node:fs';
import { COMMANDS } from './command-registry.js';

const HELP_OPTIONS = new Set(['--help', '-h']);

/** The entry of a command by name, or undefined (never an inherited property such as `toString`). */
export function findCommand(name) {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

/** `kb --help`: every command with its summary. */
export function usage() {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `kb — knowledge-base document service\n\nUsage: kb <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nEvery command reads its configuration from KB_* environment variables (see \`kb config\`).\n\`kb help <command>\` or \`kb <command> --help\` explains one command; \`kb --version\` prints the version.\n`;
}

/** `kb <command> --help`: the command's summary and usage. */
export function commandHelp(name, entry) {
  return `kb ${name} — ${entry.summary}\n\nUsage: ${entry.usage}\n`;
}

function version() {
  const file = new URL('../../../package.json', import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

/**
 * Answers the command lines that need nothing but the texts above: `kb`, `kb --help`, `kb help
 * [<command>]`, `kb <command> … --help`, `kb --version` and an unknown command. Returns the exit
 * status (0 for an answer, 2 for a command line `kb` cannot use), or undefined when the command
 * has to run.
 */
export function answerWithoutLoading(argv, out, err) {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    out.write(`kb-document-service ${version()}\n`);
    return 0;
  }
  if (name === undefined || name === '') {
    err.write(`kb: name a command.\n\n${usage()}`);
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic === undefined) {
      out.write(usage());
      return 0;
    }
    const entry = findCommand(topic);
    if (!entry) {
      err.write(`kb: unknown command "${topic}"\n\n${usage()}`);
      return 2;
    }
    out.write(commandHelp(topic, entry));
    return 0;
  }
  const entry = findCommand(name);
  if (!entry) {
    err.write(`kb: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  if (rest.some((arg) => HELP_OPTIONS.has(arg))) {
    out.write(commandHelp(name, entry));
    return 0;
  }
  return undefined;
}
