import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** What the OS offers to read and set nice values; the real one by default, a fake in unit tests. */
export interface PriorityControl {
  /** The ids of the process's threads (Linux: /proc/self/task); `[0]`, the process itself, where there are none to list. */
  threads(): number[];
  getPriority(id: number): number;
  setPriority(id: number, nice: number): void;
}

export const osPriority: PriorityControl = {
  threads: () => {
    try {
      return readdirSync('/proc/self/task').map(Number);
    } catch {
      return [0];
    }
  },
  getPriority: (id) => getPriority(id),
  setPriority: (id, nice) => setPriority(id, nice),
};

export interface CpuNiceOutcome {
  /** The nice value the process (its main thread) runs at afterwards. */
  nice: number;
  /** How many threads were moved to the asked value. */
  changed: number;
  /** Why the OS refused (e.g. EACCES); the process goes on at `nice`. */
  error?: Error;
}

/** The errno name of an `os` error (`ERR_SYSTEM_ERROR` carries it in `info.code`). */
function errno(err: unknown): string | undefined {
  const e = err as { code?: string; info?: { code?: string } };
  return e.info?.code ?? e.code;
}

/**
 * Lowers this process's CPU priority to the nice value `nice` (CPU_NICE; 0..19, 0 changes nothing).
 * Only ever lowers it: a thread already at that nice value or a higher one is left alone, so a process
 * started under `nice -n 19` stays there.
 *
 * On Linux a nice value belongs to each thread, and `os.setPriority(0, n)` sets only the calling one:
 * V8's threads (garbage collection, compilers) and libuv's, started before user code, would keep the
 * normal priority. So every thread of /proc/self/task is set; threads started later inherit the value of
 * the thread that starts them. Elsewhere `0` is the process as a whole.
 */
export function lowerCpuPriority(nice: number, os: PriorityControl = osPriority): CpuNiceOutcome {
  let changed = 0;
  let error: Error | undefined;
  if (nice > 0) {
    for (const id of os.threads()) {
      try {
        if (os.getPriority(id) >= nice) continue;
        os.setPriority(id, nice);
        changed += 1;
      } catch (err) {
        if (errno(err) === 'ESRCH') continue; // the thread ended meanwhile
        error ??= err as Error;
      }
    }
  }
  return { nice: os.getPriority(0), changed, ...(error ? { error } : {}) };
}
