/**
 * Swaps files the moment another one is first opened, from another process: what an attacker
 * with write access to a synced folder does between the service's check of a file and its reads.
 * A small Python script waits on inotify (`IN_OPEN` on the watched file) and then replaces each
 * victim, atomically (`rename`), by a symlink or a FIFO. The open is seen only once it happened,
 * so the swap lands right after the service's first open of the watched file.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';

const SCRIPT = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN = 0x20
fd = libc.inotify_init()
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), IN_OPEN) < 0:
    sys.exit('inotify: errno %d' % ctypes.get_errno())
print('ready', flush=True)
os.read(fd, 4096)
args = sys.argv[2:]
for i in range(0, len(args), 2):
    victim, target = args[i], args[i + 1]
    tmp = os.path.join(os.path.dirname(victim), '.swap-' + os.path.basename(victim))
    if target == 'fifo':
        os.mkfifo(tmp)
    else:
        os.symlink(target, tmp)
    os.rename(tmp, victim)
print('swapped', flush=True)
`;

/** Why swaps on open cannot be made here (not Linux, no python3 with ctypes), or null when they can. */
export function swapOnOpenUnsupported(): string | null {
  if (process.platform !== 'linux') return 'inotify is Linux only';
  const probe = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).inotify_init'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return 'python3 with ctypes and inotify is not available';
  return null;
}

/** A victim and what replaces it: a symlink to `target`, or a FIFO. */
export interface Swap {
  readonly victim: string;
  readonly by: { readonly symlinkTo: string } | 'fifo';
}

export interface SwapWatch {
  /** Resolves true once every victim was replaced, false when the watch stopped before. */
  readonly swapped: Promise<boolean>;
  stop(): void;
}

/** Watches `watched`; at its first open, replaces every victim. Resolves once the watch is set. */
export async function swapOnOpen(watched: string, swaps: readonly Swap[]): Promise<SwapWatch> {
  const args = swaps.flatMap((s) => [s.victim, s.by === 'fifo' ? 'fifo' : s.by.symlinkTo]);
  const child: ChildProcess = spawn('python3', ['-c', SCRIPT, watched, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let ready!: () => void;
  let failed!: (error: Error) => void;
  const isReady = new Promise<void>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  const swapped = new Promise<boolean>((resolve) => {
    lines.on('line', (line) => {
      if (line === 'ready') ready();
      if (line === 'swapped') resolve(true);
    });
    child.on('exit', () => {
      failed(new Error(`the swap watch stopped before it was set: ${stderr}`));
      resolve(false);
    });
  });
  await isReady;
  return {
    swapped,
    stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
