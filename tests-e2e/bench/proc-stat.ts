/**
 * Pure arithmetic over the machine's CPU times (the `cpu` line of /proc/stat): how busy the machine was and
 * how much of its CPUs the host took away ("steal": this machine is a VM whose host runs other guests on
 * the same cores; a stolen tick is one where this machine had work ready and no CPU to run it on). No I/O
 * here (harness.ts reads the file), so each is unit-tested (tests-e2e/test/bench-floors.e2e.ts).
 */

/**
 * The `cpu` line of /proc/stat: clock ticks (USER_HZ, 10 ms) every CPU together has spent in each state
 * since boot. guest and guest_nice are left out: the kernel already counts them in user and nice.
 */
export interface CpuTimes {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
}

/** The CpuTimes of /proc/stat's text (its first line, `cpu  user nice system idle iowait irq softirq steal …`). */
export function parseCpuTimes(procStat: string): CpuTimes {
  const end = procStat.indexOf('\n');
  const line = end < 0 ? procStat : procStat.slice(0, end);
  const fields = line.trim().split(/\s+/);
  if (fields[0] !== 'cpu' || fields.length < 5) throw new Error(`not the cpu line of /proc/stat: ${line.slice(0, 80)}`);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.slice(1).map(Number);
  // Kernels older than 2.6.11 have no steal field (nor irq/softirq before 2.6): absent counts as 0.
  return { user: user!, nice: nice!, system: system!, idle: idle!, iowait: iowait ?? 0, irq: irq ?? 0, softirq: softirq ?? 0, steal: steal ?? 0 };
}

/** Ticks of every state: over an interval, its length × the number of CPUs, as the kernel counts it. */
export function allTicks(t: CpuTimes): number {
  return t.user + t.nice + t.system + t.idle + t.iowait + t.irq + t.softirq + t.steal;
}

/**
 * Ticks the machine counts as busy: all but idle and I/O wait (interrupts included), and the time stolen by
 * the host included, as the benches' machine totals have always counted it.
 */
export function busyTicks(t: CpuTimes): number {
  return t.user + t.nice + t.system + t.irq + t.softirq + t.steal;
}

/**
 * The share of all CPUs' time the host took away between two readings, in % (one decimal): steal ticks over
 * (elapsed × CPUs), the latter being every state's ticks over the interval (so no wall clock is mixed with
 * the 10 ms ticks). NaN for an empty interval.
 */
export function stealPct(before: CpuTimes, after: CpuTimes): number {
  return stealPctOver([{ before, after }]);
}

/** stealPct over several intervals taken together (e.g. the measured phases of a floor bench): their steal over their total. */
export function stealPctOver(intervals: ReadonlyArray<{ before: CpuTimes; after: CpuTimes }>): number {
  let steal = 0;
  let all = 0;
  for (const { before, after } of intervals) {
    steal += after.steal - before.steal;
    all += allTicks(after) - allTicks(before);
  }
  return all > 0 ? Math.round((1000 * steal) / all) / 10 : NaN;
}
