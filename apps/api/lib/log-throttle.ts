/**
 * Decides which occurrences of a repeated event are written to the log: in each group's window the
 * first `perWindow` are, the rest are only counted, and `due` reports those counts once the window
 * is over (one line per group and window, which opens the next window while the flood goes on).
 */
export interface LogThrottle {
  /** Whether to log this occurrence of `group` now; when not, it is counted for `due`. */
  admit(group: string): boolean;
  /** Groups whose window is over with occurrences that were not logged, and how many. */
  due(): Array<{ readonly group: string; readonly unlogged: number }>;
}

export interface LogThrottleOptions {
  readonly windowMs: number;
  readonly perWindow: number;
  /** Groups tracked at once; beyond it the oldest is forgotten (its count with it). */
  readonly maxGroups: number;
  readonly now?: () => number;
}

interface Window {
  start: number;
  logged: number;
  unlogged: number;
}

export function createLogThrottle(options: LogThrottleOptions): LogThrottle {
  const { windowMs, perWindow, maxGroups } = options;
  const now = options.now ?? Date.now;
  const windows = new Map<string, Window>();

  const open = (group: string, window: Window) => {
    windows.delete(group);
    if (windows.size >= maxGroups) {
      const oldest = windows.keys().next();
      if (!oldest.done) windows.delete(oldest.value);
    }
    windows.set(group, window);
  };

  return {
    admit(group) {
      const t = now();
      const window = windows.get(group);
      // A window that is over without unlogged occurrences ends; one with them waits for `due`.
      if (window === undefined || (t - window.start >= windowMs && window.unlogged === 0)) {
        open(group, { start: t, logged: 1, unlogged: 0 });
        return true;
      }
      if (window.logged < perWindow) {
        window.logged += 1;
        return true;
      }
      window.unlogged += 1;
      return false;
    },

    due() {
      const t = now();
      const reports: Array<{ group: string; unlogged: number }> = [];
      for (const [group, window] of [...windows]) {
        if (t - window.start < windowMs) continue;
        if (window.unlogged === 0) {
          windows.delete(group);
          continue;
        }
        reports.push({ group, unlogged: window.unlogged });
        // The report is the next window's line: the rest of that window is counted.
        open(group, { start: t, logged: perWindow, unlogged: 0 });
      }
      return reports;
    },
  };
}
