/**
 * The burst bench's rounds (system-create-burst.bench.ts): which round is the headline, and what each
 * round keeps in the figures file. Pure: no system, no /proc (tested in tests-e2e/test/bench-burst.e2e.ts).
 */

/** What every round's figures hold (the rest of a round's figures rides along untouched). */
export interface RoundFigures {
  creates_per_s: number;
  ratio_of_pgbench: number;
  p50_ms: number;
  p99_ms: number;
  created: number;
  backlog_at_end: { calendar_pending: number; webhooks_pending: number };
  cpu_ms_per_create: { services_postgres_rabbitmq: number; machine_total: number; machine_busy_pct: number };
  pgbench: { tps: number; steal_pct: number };
  machine: { steal_pct: number; loadavg_before: number[] };
}

/**
 * The index of the median round by ratio of pgbench. With an even number of rounds, the lower of the two
 * middle ones (a real round, never an average of two, and the less flattering one). Ties keep the earlier
 * round. A ratio that is not a finite number (no pgbench figure) ranks below every other.
 */
export function medianRoundIndex(rounds: ReadonlyArray<Pick<RoundFigures, 'ratio_of_pgbench'>>): number {
  if (rounds.length === 0) throw new RangeError('no rounds');
  const key = (i: number) => (Number.isFinite(rounds[i]!.ratio_of_pgbench) ? rounds[i]!.ratio_of_pgbench : -Infinity);
  const order = rounds.map((_, i) => i).sort((a, b) => key(a) - key(b) || a - b);
  return order[Math.floor((rounds.length - 1) / 2)]!;
}

/** One round as the figures file lists it under `rounds` (1-based `round`). */
export function roundSummary(r: RoundFigures, index: number) {
  return {
    round: index + 1,
    creates_per_s: r.creates_per_s,
    ratio_of_pgbench: r.ratio_of_pgbench,
    p50_ms: r.p50_ms,
    p99_ms: r.p99_ms,
    created: r.created,
    pgbench_tps: r.pgbench.tps,
    cpu_ms_per_create: { services_postgres_rabbitmq: r.cpu_ms_per_create.services_postgres_rabbitmq, machine_total: r.cpu_ms_per_create.machine_total, machine_busy_pct: r.cpu_ms_per_create.machine_busy_pct },
    backlog_at_end: r.backlog_at_end,
    steal_pct: r.machine.steal_pct,
    pgbench_steal_pct: r.pgbench.steal_pct,
    loadavg_before: r.machine.loadavg_before,
  };
}

/**
 * The figures file of a run of rounds: the median round's figures at the top level (the fields one run
 * wrote before rounds, so old readers keep working), `median_round` (1-based) and every round's summary.
 */
export function withRounds<T extends RoundFigures>(rounds: readonly T[]): T & { median_round: number; rounds: Array<ReturnType<typeof roundSummary>> } {
  const m = medianRoundIndex(rounds);
  return { ...rounds[m]!, median_round: m + 1, rounds: rounds.map(roundSummary) };
}
