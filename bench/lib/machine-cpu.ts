import { readFileSync } from 'node:fs';
import os from 'node:os';

/** The machine's CPU time so far, in seconds, from `/proc/stat` (every process, this run's or not). */
export interface CpuSample {
  readonly busy: number;
  readonly total: number;
}

/** Clock ticks per second of `/proc/stat` (USER_HZ): 100 on Linux. */
const TICKS_PER_SECOND = 100;

/** Null where `/proc/stat` cannot be read (not Linux). */
export function sampleMachineCpu(): CpuSample | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const [label, ...fields] = line.trim().split(/\s+/);
    if (label !== 'cpu') return null;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number) as number[];
    const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
    const total = busy + (idle ?? 0) + (iowait ?? 0);
    return { busy: busy / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

/** Cores kept busy between two samples (0 … the machine's core count). */
export function busyCores(from: CpuSample, to: CpuSample): number {
  const total = to.total - from.total;
  return total > 0 ? ((to.busy - from.busy) / total) * os.availableParallelism() : 0;
}
