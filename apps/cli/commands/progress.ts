import cliProgress from 'cli-progress';

/** A progress bar on stderr (a plain line per 10% when stderr is not a terminal). */
export function progressBar(label: string) {
  const tty = Boolean(process.stderr.isTTY);
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left | {detail}`,
      stream: process.stderr,
      noTTYOutput: !tty,
      notTTYSchedule: 5000,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  return {
    start(total: number) {
      bar.start(total, 0, { detail: '' });
    },
    update(value: number, detail = '') {
      bar.update(value, { detail });
    },
    increment(detail = '') {
      bar.increment(1, { detail });
    },
    stop() {
      bar.stop();
    },
  };
}
