import { describeError } from '../../../core/errors/describe-error.ts';
import { escapeForDisplay } from '../../../core/util/display-text.ts';

export interface FailureReport {
  /** Says why on stderr, sets exit status 1, and exits once stderr has taken the line. */
  fail(error: unknown): void;
}

/**
 * Makes every failure of a `kb` command say why on stderr, whatever its cause:
 *
 * - a rejected command, an unhandled rejection or an uncaught exception (a client library's
 *   background promise, an `'error'` event nobody listens to) prints `kb: <why>` with
 *   the whole cause chain (`describeError`: never an empty line, even for an error whose message
 *   is empty, such as an HTTP client's error for a 5xx answer without a body);
 * - the process then exits with 1 once stderr has taken the line (a forced exit after a bounded
 *   wait, since a failed start-up may leave engine clients with open sockets behind), never
 *   before: a write to a pipe the process exits under is lost;
 * - and, as a last guard, a process that ends with a non-zero status without having written
 *   anything on stderr says so, naming the status.
 */
export function reportFailuresOnStderr(stderr: NodeJS.WriteStream = process.stderr): FailureReport {
  const label = 'kb';
  let saidSomething = false;
  const write = stderr.write.bind(stderr) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (chunk.length > 0) saidSomething = true;
    return write(chunk, ...rest);
  }) as typeof stderr.write;

  let failing = false;
  const fail = (error: unknown) => {
    process.exitCode = 1;
    saidSomething = true;
    const line = `${label}: ${escapeForDisplay(describeError(error))}\n`;
    if (failing) {
      write(line);
      return;
    }
    failing = true;
    // Exit once the line is written; a failed command may leave open sockets or timers behind.
    const exit = () => setTimeout(() => process.exit(1), 2_000).unref();
    write(line, exit);
  };
  process.on('unhandledRejection', (reason) => fail(reason));
  process.on('uncaughtException', (error) => fail(error));
  process.on('exit', (code) => {
    if (code !== 0 && !saidSomething) {
      write(`${label}: exited with status ${code} without a message (no error was reported before the exit)\n`);
    }
  });
  return { fail };
}
