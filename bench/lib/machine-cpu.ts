import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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

/** CPU seconds (user + system) of each process now, by pid, with its parent (Linux `/proc`). */
function processTable(): Map<number, { parent: number; seconds: number }> {
  const table = new Map<number, { parent: number; seconds: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, …, utime (12th), stime (13th).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(entry), {
        parent: Number(fields[1]),
        seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
      });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return table;
}

/**
 * CPU seconds used so far by each engine `deploy/native/` started (its process and every
 * descendant), by engine name, from the pid files in `pidDir`; empty where none is running.
 */
export function sampleEngineCpu(pidDir: string): Map<string, number> {
  const out = new Map<string, number>();
  let files: string[];
  try {
    files = readdirSync(pidDir).filter((name) => name.endsWith('.pid'));
  } catch {
    return out;
  }
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const [pid, { parent }] of table) children.set(parent, [...(children.get(parent) ?? []), pid]);
  for (const file of files) {
    const root = Number(readFileSync(path.join(pidDir, file), 'utf8').trim());
    if (!table.has(root)) continue;
    let seconds = 0;
    const stack = [root];
    while (stack.length > 0) {
      const pid = stack.pop() as number;
      seconds += table.get(pid)?.seconds ?? 0;
      stack.push(...(children.get(pid) ?? []));
    }
    out.set(file.replace(/\.pid$/, ''), seconds);
  }
  return out;
}
