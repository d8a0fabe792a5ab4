#!/usr/bin/env node
// The `kb` command. Help, the version and an unknown command are answered at once from plain
// JavaScript. Any other command runs the prebuilt JavaScript of `npm run build:cli` when it is
// current (built from the sources as they are now), else the TypeScript sources through tsx's
// loader, which alone takes a few hundred milliseconds to load; either way only the modules of
// that command are loaded.
import { fileURLToPath } from 'node:url';
import { answerWithoutLoading } from '../apps/cli/commands/help-texts.js';
import { currentBuild } from './prebuilt-cli.js';

const answered = answerWithoutLoading(process.argv.slice(2), process.stdout, process.stderr);
if (answered === undefined) {
  const built = currentBuild(fileURLToPath(new URL('..', import.meta.url)));
  if (built) {
    await import(built);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import('../apps/cli/kb.ts');
  }
} else {
  // `kb help | head`: a reader that went away is no failure.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  process.exitCode = answered;
}
