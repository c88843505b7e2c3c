/**
 * The burst bench's rounds (tests-e2e/bench/burst-rounds.ts: which round is the headline, what the figures
 * file keeps of each) and how `pnpm bench --report` (scripts/bench.mjs) renders them: the median round
 * with the range over the rounds beside it, and figures written before rounds as they always were. No
 * system runs here: the renderer reads figures files from a temporary folder.
 */
import { medianRoundIndex, withRounds, type RoundFigures } from '../bench/burst-rounds';
import { renderBenchReport as render, reportRow as row } from '../support/bench-report';

/** A round's figures as the bench writes them (only what the renderer and burst-rounds read). */
function round(createsPerS: number, tps: number, o: { p99?: number; cpu?: number; machine?: number; steal?: number; pgSteal?: number } = {}) {
  return {
    machine: { cpus: 2, loadavg_before: [1.5, 1.2, 1], loadavg_after: [1.6, 1.3, 1], steal_pct: o.steal ?? 0 },
    scenario: { connections: 32, duration_s: 10, rounds: 3 },
    creates_per_s: createsPerS,
    ratio_of_pgbench: Math.round((1000 * createsPerS) / tps) / 1000,
    p50_ms: 90,
    p99_ms: o.p99 ?? 200,
    created: createsPerS * 10,
    non_201: {},
    backlog_at_end: { calendar_pending: 10, webhooks_pending: 5 },
    cpu_ms_per_create: { by_group: { postgres: 1.2, booking: 1 }, services: 3, services_postgres_rabbitmq: o.cpu ?? 4.5, machine_total: o.machine ?? 5, machine_busy_pct: 95 },
    pgbench: { tps, p50_ms: 10, p99_ms: 20, steal_pct: o.pgSteal ?? 0 },
    met: { ratio: false, p99: false },
  };
}

describe('burst rounds: the median round by ratio of pgbench', () => {
  const r = (ratio: number) => ({ ratio_of_pgbench: ratio });

  it('takes the middle round of an odd count, wherever it ran', () => {
    expect(medianRoundIndex([r(0.23), r(0.151), r(0.189)])).toBe(2);
    expect(medianRoundIndex([r(0.189), r(0.23), r(0.151)])).toBe(0);
    expect(medianRoundIndex([r(0.2)])).toBe(0);
    expect(medianRoundIndex([r(0.1), r(0.5), r(0.3), r(0.2), r(0.4)])).toBe(2);
  });

  it('takes the lower middle round of an even count, the earlier of equal ones, and ranks a ratio that is not a number lowest', () => {
    expect(medianRoundIndex([r(0.23), r(0.151)])).toBe(1);
    expect(medianRoundIndex([r(0.3), r(0.1), r(0.4), r(0.2)])).toBe(3);
    expect(medianRoundIndex([r(0.2), r(0.2), r(0.2)])).toBe(1);
    expect(medianRoundIndex([r(0.2), r(0.2)])).toBe(0);
    // pgbench failed (tps 0: Infinity; none: NaN): that round is the worst, never the headline of three.
    expect(medianRoundIndex([r(Infinity), r(0.15), r(0.19)])).toBe(1);
    expect(medianRoundIndex([r(0.19), r(NaN), r(0.15)])).toBe(2);
    expect(() => medianRoundIndex([])).toThrow(RangeError);
  });

  it("keeps the median round's figures at the top level and every round's summary under rounds", () => {
    const rounds = [round(466, 2029, { steal: 1 }), round(282, 1870, { steal: 0.5 }), round(380, 2010, { steal: 0 })];
    const figures = withRounds(rounds);
    const { median_round, rounds: listed, ...top } = figures;
    expect(median_round).toBe(3);
    expect(top).toEqual(rounds[2]);
    expect(listed).toHaveLength(3);
    expect(listed[0]).toEqual({
      round: 1,
      creates_per_s: 466,
      ratio_of_pgbench: 0.23,
      p50_ms: 90,
      p99_ms: 200,
      created: 4660,
      pgbench_tps: 2029,
      cpu_ms_per_create: { services_postgres_rabbitmq: 4.5, machine_total: 5, machine_busy_pct: 95 },
      backlog_at_end: { calendar_pending: 10, webhooks_pending: 5 },
      steal_pct: 1,
      pgbench_steal_pct: 0,
      loadavg_before: [1.5, 1.2, 1],
    });
    expect(listed.map((x) => x.round)).toEqual([1, 2, 3]);
    // What a round must hold is what the bench writes (compile-time check of the fixture's shape).
    const typed: RoundFigures = rounds[0]!;
    expect(typed.pgbench.tps).toBe(2029);
  });
});

describe('pnpm bench --report: the burst as the median of its rounds', () => {
  const rounds = [
    round(466, 2029, { p99: 150, cpu: 3.2, machine: 3.7, steal: 1.5, pgSteal: 0.2 }),
    round(282, 1870, { p99: 310, cpu: 5.4, machine: 6.2, steal: 0, pgSteal: 0 }),
    round(380, 2010, { p99: 220, cpu: 4.1, machine: 4.6, steal: 0.4, pgSteal: 3 }),
  ];

  it('shows the median round and, beside each figure, the range over the rounds', () => {
    const page = render({ 'system-create-burst.json': { ...withRounds(rounds), failed_checks: [] } });
    const head = row(page, 'Creates through the gateway');
    expect(head[0]).toBe('Creates through the gateway, 32 connections, 10 s burst');
    expect(head[1]).toBe('380 /s = 18.9 % of pgbench; median of 3 rounds (round 3); range 15.1–23 % (282–466 /s)');
    expect(head[5]).toBe('2010 tps (pgbench, the create transaction, 32 clients, same run); 1870–2029 tps over the rounds, each right after its own burst');
    expect(head[6]).toBe('1.50 1.20 1; 0.4 % (pgbench 3 %); over the rounds 0–1.5 % (pgbench 0–3 %)');
    expect(row(page, '… p50 / p99')[1]).toBe('90 / 220 ms; p99 range 150–310 ms over the rounds');
    expect(row(page, '… CPU per create during the burst')[1]).toMatch(/^4\.1 across the six services \+ Postgres \+ RabbitMQ; machine 4\.6 \(.*\); range 3\.2–5\.4 \(six \+ Postgres \+ RabbitMQ\), machine 3\.7–6\.2 over the rounds$/);
    expect(page).toContain('the bench runs BENCH_BURST_ROUNDS of them (3), each with the system started afresh');
  });

  it('gives one figure for a range whose ends are equal as shown', () => {
    const same = [round(200, 1000, { steal: 0 }), round(201, 1000, { steal: 0 })];
    const head = row(render({ 'system-create-burst.json': { ...withRounds(same), failed_checks: [] } }), 'Creates through the gateway');
    expect(head[1]).toBe('200 /s = 20 % of pgbench; median of 2 rounds (round 1); range 20–20.1 % (200–201 /s)');
    expect(head[5]).toBe('1000 tps (pgbench, the create transaction, 32 clients, same run); 1000 tps over the rounds, each right after its own burst');
    expect(head[6]).toBe('1.50 1.20 1; 0 % (pgbench 0 %); over the rounds 0 % (pgbench 0 %)');
  });

  it("names the run's own burst length and says so when there was one round", () => {
    const short = { ...withRounds([round(300, 2000)]), scenario: { connections: 32, duration_s: 4, rounds: 1 }, failed_checks: [] };
    const head = row(render({ 'system-create-burst.json': short }), 'Creates through the gateway');
    expect(head[0]).toBe('Creates through the gateway, 32 connections, 4 s burst');
    expect(head[1]).toBe('300 /s = 15 % of pgbench; one round');
  });

  it('renders figures written before rounds as before: one run, no range', () => {
    const { scenario: _scenario, ...old } = round(380, 2010, { p99: 220, cpu: 4.1, machine: 4.6, steal: 0.4, pgSteal: 3 });
    const page = render({ 'system-create-burst.json': { ...old, failed_checks: [] } });
    const head = row(page, 'Creates through the gateway');
    expect(head[0]).toBe('Creates through the gateway, 32 connections, 10 s burst');
    expect(head[1]).toBe('380 /s = 18.9 % of pgbench');
    expect(head[5]).toBe('2010 tps (pgbench, the create transaction, 32 clients, same run)');
    expect(head[6]).toBe('1.50 1.20 1; 0.4 % (pgbench 3 %)');
    expect(row(page, '… p50 / p99')[1]).toBe('90 / 220 ms');
    expect(row(page, '… CPU per create during the burst')[1]).toBe('4.1 across the six services + Postgres + RabbitMQ; machine 4.6 (postgres 1.20, booking 1; machine 95 % busy)');
  });
});
