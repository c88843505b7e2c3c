/**
 * Pure arithmetic of the floor benches (radicale-floor, slots-floor): CPU use as % of one core over
 * sampled windows, the CPU cost of a slice of a run's operations, per-unit figures. No I/O here, so
 * each is unit-tested (tests-e2e/test/bench-floors.e2e.ts).
 */
import { percentile } from '../../services/availability/bench/fixture';

/** One reading of a process's CPU time (ms, user + system) at a wall-clock time (ms). */
export interface CpuSample {
  atMs: number;
  cpuMs: number;
}

/**
 * The CPU use between consecutive samples, in % of one core (100 = one core busy the whole window;
 * a single-threaded process, or one under a global lock, never goes above about 100). Windows
 * shorter than `minWindowMs` are merged into the next, so the 10 ms tick of /proc does not make a
 * short window read 0 or 200 %.
 */
export function corePercents(samples: readonly CpuSample[], minWindowMs = 500): number[] {
  const out: number[] = [];
  let from = samples[0];
  for (const s of samples.slice(1)) {
    if (!from || s.atMs - from.atMs < minWindowMs) continue;
    out.push((100 * (s.cpuMs - from.cpuMs)) / (s.atMs - from.atMs));
    from = s;
  }
  return out;
}

/** Mean and highest of corePercents, rounded to whole %; null when no window was long enough. */
export function coreUse(samples: readonly CpuSample[], minWindowMs = 500): { mean_pct: number; max_pct: number; windows: number } | null {
  const windows = corePercents(samples, minWindowMs);
  if (windows.length === 0) return null;
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  return { mean_pct: Math.round((100 * (last.cpuMs - first.cpuMs)) / Math.max(1, last.atMs - first.atMs)), max_pct: Math.round(Math.max(...windows)), windows: windows.length };
}

/**
 * CPU per operation over the operations `from` (inclusive) to `to` (exclusive) of a run, from
 * `cpuAtDone[k]`, the CPU reading when k operations had completed (cpuAtDone[0]: at the start).
 */
export function costOfSlice(cpuAtDone: readonly number[], from: number, to: number): number {
  if (from < 0 || to >= cpuAtDone.length || to <= from) throw new RangeError(`costOfSlice: slice ${from}..${to} outside 0..${cpuAtDone.length - 1}`);
  return (cpuAtDone[to]! - cpuAtDone[from]!) / (to - from);
}

/** p50 and p99 (nearest rank) of samples in ms; NaN when there are none. */
export function p50p99(samples: readonly number[]): { p50_ms: number; p99_ms: number } {
  if (samples.length === 0) return { p50_ms: NaN, p99_ms: NaN };
  return { p50_ms: percentile([...samples], 50), p99_ms: percentile([...samples], 99) };
}

/** CPU µs per request of each named process over a run, from their CPU ms before and after. */
export function microsPerRequest(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>, requests: number): Record<string, number> {
  const n = Math.max(1, requests);
  return Object.fromEntries(Object.keys(after).map((k) => [k, Math.round((1000 * (after[k]! - (before[k] ?? 0))) / n)]));
}

/**
 * The create floor's CPU per create by process (ms, from harness cpuPerUnit's by_group): each named process
 * under its label, Postgres and the load generator (the bench process, harness LOAD_GENERATOR) as they are
 * grouped, everything else together as `other`; 0 for a named process that used none.
 */
export function cpuByProcess(byGroup: Readonly<Record<string, number>>, named: readonly string[], loadGenerator: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of [...named, 'postgres']) out[k] = byGroup[k] ?? 0;
  out['load generator'] = byGroup[loadGenerator] ?? 0;
  const known = new Set([...named, 'postgres', loadGenerator]);
  const other = Object.entries(byGroup)
    .filter(([k]) => !known.has(k))
    .reduce((a, [, v]) => a + v, 0);
  out.other = Math.round(other * 1000) / 1000;
  return out;
}

/** creates/s over pgbench's tps, 3 decimals; NaN without a pgbench figure. */
export function ratioOf(perS: number, tps: number): number {
  return tps > 0 && Number.isFinite(tps) ? Math.round((1000 * perS) / tps) / 1000 : NaN;
}
