/**
 * The floor benches' arithmetic (tests-e2e/bench/floor-stats.ts), the steal over /proc/stat readings
 * (proc-stat.ts), and how `pnpm bench --report` (scripts/bench.mjs) renders their figures as the "physical
 * limit, same run" of the whole-system rows they bound, and each run's CPU stolen by the host. No system
 * runs here: the renderer reads figures files from a temporary folder.
 */
import { bookingSchema, eventMessageSchema, slotChecksResponseSchema } from '@sched/contracts';
import { statementsScript } from '../../services/booking/bench/pgbench-booking';
import { createFloorPayloads, scriptStatements } from '../bench/floor/create-transaction';
import { coreUse, corePercents, costOfSlice, cpuByProcess, microsPerRequest, p50p99, ratioOf } from '../bench/floor-stats';
import { allTicks, busyTicks, parseCpuTimes, stealPct, stealPctOver } from '../bench/proc-stat';
import { renderBenchReport as render, reportRow as row } from '../support/bench-report';

describe('floor-stats', () => {
  it('gives CPU use in % of one core per window, merging windows shorter than the minimum', () => {
    const samples = [
      { atMs: 0, cpuMs: 0 },
      { atMs: 1000, cpuMs: 500 },
      { atMs: 1200, cpuMs: 700 }, // merged into the next window: 200 ms alone would read 100 %
      { atMs: 2000, cpuMs: 1490 },
    ];
    expect(corePercents(samples, 500)).toEqual([50, 99]);
    expect(coreUse(samples, 500)).toEqual({ mean_pct: 75, max_pct: 99, windows: 2 });
    expect(coreUse([{ atMs: 0, cpuMs: 0 }], 500)).toBeNull();
  });

  it('costs a slice of a run from the CPU read at each completion', () => {
    const cpuAtDone = [100, 110, 125, 145, 170];
    expect(costOfSlice(cpuAtDone, 0, 2)).toBe(12.5);
    expect(costOfSlice(cpuAtDone, 2, 4)).toBe(22.5);
    expect(() => costOfSlice(cpuAtDone, 3, 5)).toThrow(RangeError);
    expect(() => costOfSlice(cpuAtDone, 2, 2)).toThrow(RangeError);
  });

  it('gives nearest-rank p50 and p99, and CPU µs per request per process', () => {
    expect(p50p99([5, 1, 4, 2, 3])).toEqual({ p50_ms: 3, p99_ms: 5 });
    expect(p50p99([])).toEqual({ p50_ms: NaN, p99_ms: NaN });
    expect(microsPerRequest({ server: 100, proxy: 200 }, { server: 130, proxy: 260 }, 1000)).toEqual({ server: 30, proxy: 60 });
  });
});

describe('create floor: the transaction, the payloads and the CPU per process', () => {
  const payloads = createFloorPayloads();

  it("sends pgbench's script of the create statement for statement, each :n its own parameter, as pgbench -M prepared does", () => {
    const statements = scriptStatements(statementsScript(payloads.samples));
    expect(statements.map((s) => s.text.split(/[ (]/)[0])).toEqual(['BEGIN', 'SELECT', 'SELECT', 'INSERT', 'INSERT', 'SELECT', 'COMMIT']);
    expect(statements.map((s) => s.setsN)).toEqual([false, true, false, false, false, false, false]);
    // claim: md5(:n::text), :n::bigint; booking: its id and 4 timestamps (start, end, blocked from, blocked to); outbox: its id; key row: md5(:n::text), md5('f' || :n).
    expect(statements.map((s) => s.params)).toEqual([0, 0, 2, 5, 1, 2, 0]);
    expect(statements[2]!.text).toBe("SELECT * FROM booking.idempotency_claim(md5($1::text), $2::bigint, 'wsp_bench')");
    for (const s of statements) {
      expect(s.text).not.toMatch(/(?<!:):n\b|;$/);
      expect(s.text.match(/\$\d+/g) ?? []).toEqual(Array.from({ length: s.params }, (_, k) => `$${k + 1}`));
    }
    // The casts and the timestamp literal's colons are not variables.
    expect(statements[3]!.text).toContain("timestamptz '2040-01-01T00:00:00Z' + $2 * interval '1 hour'");
    expect(new Set(statements.map((s) => s.name)).size).toBe(7);
    expect(() => scriptStatements("\\set n random(1, 10)\nSELECT :n;")).toThrow(/meta-command/);
  });

  it('stores and answers payloads of the contracts: the Booking of a create, its booking.created message, one bookable slot check', () => {
    const created = JSON.parse(payloads.created) as { data: unknown; meta: { request_id: string } };
    expect(bookingSchema.safeParse(created.data).success).toBe(true);
    expect(payloads.samples.storedResponse).toBe(payloads.created);
    expect(eventMessageSchema.safeParse(JSON.parse(payloads.samples.outboxPayload)).success).toBe(true);
    expect(JSON.parse(payloads.samples.metadata)).toEqual((created.data as { metadata: unknown }).metadata);
    const answer = JSON.parse(payloads.slotCheckAnswer) as { data: Array<{ bookable: boolean }> };
    expect(slotChecksResponseSchema.safeParse(answer.data).success).toBe(true);
    expect(answer.data).toHaveLength(1);
    expect(answer.data[0]!.bookable).toBe(true);
  });

  it('names each process, puts the rest under other, and gives the ratio to pgbench', () => {
    const byGroup = { 'proxy (gateway)': 0.2, 'server (booking)': 0.4, postgres: 0.9, 'bench client + receiver': 0.15, 'kernel threads': 0.01, other: 0.02 };
    expect(cpuByProcess(byGroup, ['proxy (gateway)', 'server (booking)', 'availability stub'], 'bench client + receiver')).toEqual({
      'proxy (gateway)': 0.2,
      'server (booking)': 0.4,
      'availability stub': 0,
      postgres: 0.9,
      'load generator': 0.15,
      other: 0.03,
    });
    expect(ratioOf(500, 2000)).toBe(0.25);
    expect(ratioOf(500, 0)).toBeNaN();
  });
});

describe('proc-stat: the CPU stolen by the host', () => {
  // Two readings of /proc/stat 5 s apart on 2 CPUs (1,000 ticks of 10 ms in all): 250 of them stolen.
  const before = parseCpuTimes('cpu  66310 7225 16565 100900 1499 10 2292 8667 0 0\ncpu0 33155 3612 8282 50450 749 5 1146 4333 0 0\nintr 1 2 3\n');
  const after = parseCpuTimes('cpu  66710 7225 16665 101100 1499 10 2342 8917 120 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n');

  it('reads the cpu line (guest left out: the kernel counts it in user) and adds its ticks up', () => {
    expect(before).toEqual({ user: 66310, nice: 7225, system: 16565, idle: 100900, iowait: 1499, irq: 10, softirq: 2292, steal: 8667 });
    expect(allTicks(after) - allTicks(before)).toBe(1000);
    expect(busyTicks(after) - busyTicks(before)).toBe(800); // user 400 + system 100 + softirq 50 + steal 250
    expect(parseCpuTimes('cpu  10 0 5 100\n')).toMatchObject({ iowait: 0, steal: 0 });
    expect(() => parseCpuTimes('intr 1 2 3\ncpu 1 2 3 4')).toThrow(/not the cpu line/);
  });

  it('gives the stolen share of elapsed time × CPUs, alone and over several intervals', () => {
    expect(stealPct(before, after)).toBe(25);
    expect(stealPct(before, before)).toBeNaN();
    // A second interval of 400 ticks with none stolen: 250 of 1,400 together.
    const later = { ...after, user: after.user + 100, idle: after.idle + 300 };
    expect(stealPct(after, later)).toBe(0);
    expect(stealPctOver([{ before, after }, { before: after, after: later }])).toBe(17.9);
  });
});

// Figures files as the benches write them (only the fields the renderer reads).
const machine = { cpus: 2, loadavg_before: [1.5, 1.2, 1], loadavg_after: [1.6, 1.3, 1] };
const cpu = { by_group: { radicale: 30, postgres: 10 }, services: 20, services_postgres_rabbitmq: 40, machine_total: 60, machine_busy_pct: 90 };
const sustained = (hosts: number) => ({
  machine,
  scenario: { rate_per_s: 150, duration_s: 10, hosts },
  created: 1500,
  non_201: {},
  bookings_stored: 1500,
  sent_per_s: 150,
  create_p50_ms: 800,
  create_p99_ms: 2500,
  all_synced_and_delivered_s: 100,
  sustained_per_s: 15,
  synced_lag_ms: { p50: 1, p99: 2 },
  webhook_lag_ms: { p50: 1, p99: 2 },
  cpu_ms_per_booking: cpu,
  met: { sustained: false, cpu: false },
  failed_checks: [],
});
const radicaleScenario = (calendars: number, putsPerS: number, ceiling: number) => ({
  calendars,
  puts: 1500,
  writers: 4,
  events_per_calendar_at_end: Math.round(1564 / calendars),
  puts_per_s: putsPerS,
  radicale_cpu_ms_per_put: 30.5,
  one_core_ceiling_puts_per_s: 32.8,
  one_core_ceiling_at_end_puts_per_s: ceiling,
  client_cpu_ms_per_put: 1.2,
  radicale_core_pct: { mean_pct: 80, max_pct: 101, windows: 40 },
  radicale_max_threads: 5,
  machine_busy_pct: 70,
  first_100: { radicale_cpu_ms_per_put: 12.25, latency: { p50_ms: 40, p99_ms: 90 } },
  last_100: { radicale_cpu_ms_per_put: 48.5, latency: { p50_ms: 190, p99_ms: 300 } },
  connections_opened_per_put: 1,
});
const hop = (p50: number, p99: number, rps: number, cpuUs: Record<string, number>) => ({ p50_ms: p50, p99_ms: p99, requests_per_s: rps, requests: rps * 65, non_2xx_or_errors: 0, cpu_us_per_request: cpuUs });
const slots = {
  machine,
  scenario: { window_s: 65 },
  response_bytes: 24737,
  gateway: { p50_ms: 22, p99_ms: 67, requests_per_s: 2008 },
  static_baseline: { p50_ms: 3, p99_ms: 12, requests_per_s: 11624 },
  cpu_ms_per_request: cpu,
  expiries_in_window: { slots_cache_ttl_ms: 5000, slots_cache_lifetimes: 13, slots_answers_computed: 13, snapshot_refresh_interval_ms: 60000, snapshot_refreshes: 1, snapshot_full_reads: 0 },
  met: { p50: false, p99: false },
  failed_checks: [],
};

describe('pnpm bench --report: the floors as the physical limit of the rows they bound', () => {
  const base = { 'system-sustained.json': sustained(1), 'system-sustained-spread.json': sustained(10), 'system-slots.json': slots };
  const radicale = { machine, one_calendar: radicaleScenario(1, 24.5, 20.6), ten_calendars: radicaleScenario(10, 61.2, 160), failed_checks: [] };
  const twoHops = {
    machine,
    scenario: { window_s: 65 },
    response_bytes: 24737,
    one_hop: hop(3, 12, 11000, { server: 40, 'load generator': 90 }),
    two_hops: hop(7, 21, 5200, { server: 45, proxy: 120, 'load generator': 95 }),
    two_hops_credential: hop(9, 28, 4100, { server: 80, proxy: 150, 'load generator': 97 }),
    failed_checks: [],
  };

  it("renders Radicale's PUTs/s beside the sustained rows and the two-hop floor beside the Slots rows", () => {
    const page = render({ ...base, 'radicale-floor.json': radicale, 'slots-floor.json': twoHops });
    expect(row(page, 'Sustained, every Booking')[5]).toBe(
      "24.5 Bookings/s: Radicale alone takes 24.5 PUTs/s into one calendar (4 writers, 1500 PUTs; radicale-floor), 20.6 /s with a core to itself at the calendar's end size; 150 /s offered (load generator sent 150 /s)",
    );
    expect(row(page, '… the same spread over 10 hosts')[5]).toMatch(/^61\.2 Bookings\/s: Radicale alone takes 61\.2 PUTs\/s into 10 calendars .*; 133\.3 ms of CPU per Booking on 2 cores at the rate reached$/);
    const provider = row(page, "… the calendar provider's own limit");
    expect(provider[1]).toContain('one calendar (1564 events each at the end): 24.5 PUTs/s; Radicale 30.5 ms CPU per PUT (first 100 12.3, last 100 48.5; p50 40 → 190 ms), 80 % of one core on average, at most 101 % (5 threads at most); client 1.2 ms per PUT; 1 TCP connections opened per PUT; machine 70 % busy');
    expect(provider[1]).toContain('10 calendars (156 events each at the end): 61.2 PUTs/s');
    expect(provider[3]).toBe('**out of reach with Radicale here: one calendar**');
    // The design's floor (two hops with the credential) is past the p50 target (9 > 5 ms), not the p99 one (28 ≤ 30 ms).
    expect(row(page, 'Slots through the gateway, 50 connections')[3]).toContain('**out of reach here**: two hops with the credential alone take 9 ms (slots-floor)');
    expect(row(page, '… p99')[3]).not.toContain('out of reach');
    expect(row(page, 'Slots through the gateway, 50 connections')[5]).toBe('3 ms (bare Node HTTP, one hop, same 24737 B); two bare hops 7 ms, with the internal credential (jose) 9 ms (slots-floor)');
    expect(row(page, '… p99')[5]).toBe('12 ms (bare Node HTTP, one hop); two bare hops 21 ms, with the internal credential (jose) 28 ms (slots-floor)');
    expect(row(page, '… throughput')[5]).toBe('11624 req/s (bare Node HTTP, one hop); two bare hops 5200 req/s, with the internal credential (jose) 4100 req/s (slots-floor)');
    expect(row(page, '… CPU per request (µs')[5]).toMatch(/^two bare hops: proxy 120 \+ server 45; with the credential: proxy 150 \+ server 80; one hop: server 40 /);
    expect(page).toContain('**Radicale alone, the sustained floor** (tests-e2e/bench/radicale-floor.bench.ts)');
    expect(page).toContain('**Two bare hops, the Slots floor** (tests-e2e/bench/slots-floor.bench.ts)');
  });

  it('says when the floor answered another body, shows its failed checks, and leaves the rows as they were without floors', () => {
    const page = render({ ...base, 'radicale-floor.json': { ...radicale, one_calendar: radicaleScenario(1, 200, 210), failed_checks: ['1 calendar(s): 3 events in the calendars, 1564 PUT'] }, 'slots-floor.json': { ...twoHops, response_bytes: 100 } });
    expect(row(page, "… the calendar provider's own limit")[3]).toBe('–');
    expect(row(page, 'Radicale alone: **FAILED CHECKS**')[1]).toBe('1 calendar(s): 3 events in the calendars, 1564 PUT');
    expect(row(page, 'Slots through the gateway, 50 connections')[5]).toContain('(on a 100 B answer) (slots-floor)');

    const without = render(base);
    expect(row(without, 'Sustained, every Booking')[5]).toBe('150 /s offered (load generator sent 150 /s)');
    expect(row(without, 'Slots through the gateway, 50 connections')[5]).toBe('3 ms (bare Node HTTP, one hop, same 24737 B)');
    expect(row(without, '… CPU per request (µs')[5]).toBe('–');
    expect(without).not.toContain("the calendar provider's own limit");
  });
});

describe('pnpm bench --report: the CPU stolen by the host', () => {
  const burst = (stealPctBurst?: number, stealPctPgbench?: number) => ({
    machine: { ...machine, ...(stealPctBurst === undefined ? {} : { steal_pct: stealPctBurst }) },
    creates_per_s: 200,
    ratio_of_pgbench: 0.1,
    p50_ms: 150,
    p99_ms: 280,
    non_201: {},
    backlog_at_end: { calendar_pending: 10, webhooks_pending: 5 },
    cpu_ms_per_create: cpu,
    pgbench: { tps: 2000, p50_ms: 10, p99_ms: 20, ...(stealPctPgbench === undefined ? {} : { steal_pct: stealPctPgbench }) },
    met: { ratio: false, p99: false },
    failed_checks: [],
  });
  const last = (page: string, figure: string) => row(page, figure).at(-1);

  it('shows it beside the load at start, with the physical limit\'s in brackets, and explains it', () => {
    const page = render({
      'system-create-burst.json': burst(23.4, 4),
      'system-sustained.json': { ...sustained(1), machine: { ...machine, steal_pct: 0 } },
      'system-slots.json': { ...slots, machine: { ...machine, steal_pct: 12.5 }, static_baseline: { ...slots.static_baseline, steal_pct: 30 } },
    });
    expect(page).toContain('| load at start; CPU stolen by the host during the run |');
    expect(last(page, 'Creates through the gateway')).toBe('1.50 1.20 1; 23.4 % (pgbench 4 %)');
    expect(last(page, '… CPU per create during the burst')).toBe('1.50 1.20 1; 23.4 % (pgbench 4 %)');
    expect(last(page, 'Sustained, every Booking')).toBe('1.50 1.20 1; 0 %');
    expect(last(page, 'Slots through the gateway, 50 connections')).toBe('1.50 1.20 1; 12.5 % (bare server 30 %)');
    expect(page).toContain('"steal", the 8th figure of the `cpu` line of /proc/stat');
  });

  it('shows – for figures written before it was measured', () => {
    const page = render({ 'system-create-burst.json': burst(), 'system-sustained.json': sustained(1) });
    expect(last(page, 'Creates through the gateway')).toBe('1.50 1.20 1; –');
    expect(last(page, 'Sustained, every Booking')).toBe('1.50 1.20 1; –');
  });
});

describe('pnpm bench --report: the create floor beside the burst', () => {
  const burstAt = (ratio: number) => ({
    machine,
    creates_per_s: 300,
    ratio_of_pgbench: ratio,
    p50_ms: 90,
    p99_ms: 300,
    non_201: {},
    backlog_at_end: { calendar_pending: 10, webhooks_pending: 5 },
    cpu_ms_per_create: cpu,
    pgbench: { tps: 2000, p50_ms: 10, p99_ms: 20 },
    met: { ratio: false, p99: false },
    failed_checks: [],
  });
  const variant = (perS: number, ratio: number, cpuMs: Record<string, number>) => ({ creates_per_s: perS, p50_ms: 40, p99_ms: 95, created: perS * 10, non_201: {}, transport_errors: 0, bookings_stored: perS * 10, cpu_ms_per_create: cpuMs, machine_busy_pct: 99, steal_pct: 3, ratio_of_pgbench: ratio });
  const createFloor = (threeHopsRatio: number, failed: string[] = []) => ({
    machine: { ...machine, steal_pct: 3 },
    scenario: { connections: 32, duration_s: 10 },
    three_hops: variant(800, threeHopsRatio, { 'proxy (gateway)': 0.25, 'server (booking)': 0.5, 'availability stub': 0.12, postgres: 0.9, 'load generator': 0.1, other: 0, machine: 2.4 }),
    two_hops: variant(1000, 0.5, { 'proxy (gateway)': 0.25, 'server (booking)': 0.4, postgres: 0.9, 'load generator': 0.1, other: 0, machine: 2 }),
    pgbench: { tps: 2000, p50_ms: 15, p99_ms: 30, transactions: 20000, failed: 0, steal_pct: 5 },
    failed_checks: failed,
  });
  const floorRow = "… the design's floor: three hops with the credential and the create transaction, no service code";

  it('names how the floor shares slot checks and commits creates when its figures say so', () => {
    const floor = createFloor(0.4) as { scenario?: Record<string, unknown> };
    floor.scenario = { ...floor.scenario, slot_check: 'shared as booking shares them', commit: 'group-committed as booking commits creates' };
    const cells = row(render({ 'system-create-burst.json': burstAt(0.15), 'create-floor.json': floor }), floorRow);
    expect(cells[1]).toContain('p50 / p99 40 / 95 ms (slot checks shared as booking shares them; creates group-committed as booking commits creates); without the slot-check hop');
    expect(cells[1]).not.toContain('an upper bound');
  });

  it('renders the floor under the burst, with its share of pgbench, each process and the pgbench run as its limit', () => {
    const page = render({ 'system-create-burst.json': burstAt(0.15), 'create-floor.json': createFloor(0.4) });
    const cells = row(page, floorRow);
    expect(cells[1]).toBe(
      '800 /s = 40 % of pgbench, p50 / p99 40 / 95 ms (one slot-check call per create: an upper bound); without the slot-check hop 1000 /s = 50 % of pgbench, p50 / p99 40 / 95 ms. CPU per create (µs, /proc): proxy (gateway) 250, server (booking) 500, availability stub 120, postgres 900, load generator 100, other 0, machine 2400; without the slot check: proxy (gateway) 250, server (booking) 400, postgres 900, load generator 100, other 0, machine 2000',
    );
    // 40 % is not below the target: how far the burst (15 %) is from its floor (40 %).
    expect(cells[3]).toBe('not out of reach by the floor (40 % of pgbench); the burst is at 38 % of its floor (15 % of pgbench), 2.7× below it');
    expect(cells[5]).toBe('2000 tps, p50 / p99 15 / 30 ms (pgbench, the same transaction, 32 clients, right after)');
    expect(cells[6]).toBe('1.50 1.20 1; 3 % (pgbench 5 %)');
    // The floor's row comes right after the burst's own rows.
    const lines = page.split('\n');
    expect(lines.findIndex((l) => l.startsWith(`| ${floorRow}`))).toBe(lines.findIndex((l) => l.startsWith('| … CPU per create during the burst')) + 1);
    expect(page).toContain('**The create floor** (tests-e2e/bench/create-floor.bench.ts)');
  });

  it('says the target is out of reach for the design when even the floor is under 40 % of pgbench, and shows failed checks', () => {
    const page = render({ 'system-create-burst.json': burstAt(0.15), 'create-floor.json': createFloor(0.325, ['two hops (no slot-check call): answers other than 201: 3× 500']) });
    expect(row(page, floorRow)[3]).toBe('**out of reach for the design here**: the floor itself reaches 32.5 % of pgbench (< 40 %)');
    expect(row(page, 'Create floor: **FAILED CHECKS**')[1]).toBe('two hops (no slot-check call): answers other than 201: 3× 500');
  });

  it('stands alone without a burst, and is absent without its figures', () => {
    expect(row(render({ 'create-floor.json': createFloor(0.45) }), floorRow)[3]).toBe('the floor reaches 45 % of pgbench (≥ 40 %): not out of reach by the floor');
    expect(render({ 'system-create-burst.json': burstAt(0.15) })).not.toContain("the design's floor");
  });
});
