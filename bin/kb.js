#!/usr/bin/env node
// The `kb` command. Help, the version and an unknown command are answered at once from plain
// JavaScript; any other command runs the TypeScript sources through tsx's loader, which alone
// takes a few hundred milliseconds to load, and then only the modules of that command.
import { answerWithoutLoading } from '../apps/cli/commands/help-texts.js';

const answered = answerWithoutLoading(process.argv.slice(2), process.stdout, process.stderr);
if (answered === undefined) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../apps/cli/kb.ts');
} else {
  // `kb help | head`: a reader that went away is no failure.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  process.exitCode = answered;
}
