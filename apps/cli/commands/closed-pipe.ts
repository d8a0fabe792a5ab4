import type { Writable } from 'node:stream';

/**
 * Makes a closed reader of `stream` (`kb config | head -5`) end the process at once with exit 0
 * and no message, as a command-line tool does when its output is no longer wanted. Any other
 * write error is left to surface.
 */
export function exitQuietlyOnClosedPipe(
  stream: Writable,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') exit(0);
    else throw error;
  });
}
