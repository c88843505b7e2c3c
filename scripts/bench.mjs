// `pnpm bench`: every benchmark in one run, then docs/benchmarks.md with the machine, each figure
// beside its target and its physical-limit baseline measured in the same run.
// `pnpm bench --report` only re-renders docs/benchmarks.md from the last results in .data/bench/.
// BENCH_DATA_DIR and BENCH_REPORT_FILE name another results folder and page (the renderer's tests).
import { spawnSync, execSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, totalmem, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = process.env.BENCH_DATA_DIR ?? join(root, '.data', 'bench');
const reportFile = process.env.BENCH_REPORT_FILE ?? join(root, 'docs', 'benchmarks.md');
const BENCHES = [
  // Issue 18: the headline figures, the whole system as `npm start` runs it (tests-e2e/bench/harness.ts).
  { name: 'system-create-burst', script: 'tests-e2e/bench/system-create-burst.bench.ts', file: 'system-create-burst.json' },
  // The physical limit of the burst: its three hops with the credential and its transaction, no service code.
  { name: 'create-floor', script: 'tests-e2e/bench/create-floor.bench.ts', file: 'create-floor.json' },
  { name: 'system-sustained', script: 'tests-e2e/bench/system-sustained.bench.ts', file: 'system-sustained.json' },
  // The same spread over 10 hosts, each with its own calendar: Radicale's cost per PUT grows with the calendar.
  { name: 'system-sustained-spread', script: 'tests-e2e/bench/system-sustained.bench.ts', file: 'system-sustained-spread.json', env: { BENCH_HOSTS: '10' } },
  // The physical limit of the sustained rows: Radicale alone taking calendar-sync's one PUT per Booking.
  { name: 'radicale-floor', script: 'tests-e2e/bench/radicale-floor.bench.ts', file: 'radicale-floor.json' },
  { name: 'system-slots', script: 'tests-e2e/bench/system-slots.bench.ts', file: 'system-slots.json' },
  // The physical limit of the Slots rows: two bare Node HTTP hops answering the answer system-slots measured.
  { name: 'slots-floor', script: 'tests-e2e/bench/slots-floor.bench.ts', file: 'slots-floor.json' },
  // The floor under the CPU target: RabbitMQ and Postgres alone, for one Booking's messages and commits.
  { name: 'system-floor', script: 'tests-e2e/bench/system-floor.bench.ts', file: 'system-floor.json' },
  // Locators: parts of the system with the rest stubbed, and the parts alone.
  { name: 'availability', script: 'services/availability/bench/slots.bench.ts', file: 'availability.json' },
  { name: 'booking', script: 'services/booking/bench/create.bench.ts', file: 'booking.json' },
  { name: 'calendar-sync', script: 'services/calendar-sync/bench/busy.bench.ts', file: 'calendar-sync-busy.json' },
  { name: 'webhook-dispatch', script: 'services/webhook-dispatch/bench/dispatch.bench.ts', file: 'webhook-dispatch.json' },
  { name: 'create-to-webhook', script: 'tests-e2e/bench/create-to-webhook.bench.ts', file: 'create-to-webhook.json' },
];

const sh = (cmd) => {
  try {
    return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
};

function machine() {
  const cpu = cpus();
  return {
    os: sh(". /etc/os-release && echo \"$PRETTY_NAME\""),
    kernel: release(),
    cpu: `${cpu[0]?.model ?? 'unknown'} × ${cpu.length}`,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: process.version,
    postgres: sh("psql -h 127.0.0.1 -U postgres -Atc 'show server_version'"),
    rabbitmq: sh('rabbitmqctl version'),
    loadavg: loadavg().map((x) => x.toFixed(2)).join(' '),
  };
}

const started = new Date();
const host = machine();
const failedBenches = [];
if (!process.argv.includes('--report')) {
  mkdirSync(out, { recursive: true });
  for (const [i, b] of BENCHES.entries()) {
    console.log(`[bench ${i + 1}/${BENCHES.length}] ${b.name} (${b.script})`);
    const t0 = Date.now();
    // No figures from an earlier run may pass for this one's: a bench that fails before writing shows none.
    rmSync(join(out, b.file), { force: true });
    const r = spawnSync(process.execPath, ['--import', 'tsx', b.script], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...b.env } });
    if (r.status !== 0) failedBenches.push(b.name);
    console.log(`[bench ${i + 1}/${BENCHES.length}] ${b.name} ${r.status === 0 ? 'done' : `FAILED (exit ${r.status})`} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  console.log(`bench: all ${BENCHES.length} in ${((Date.now() - started.getTime()) / 60000).toFixed(1)} min`);
}

const load = (f) => (existsSync(join(out, f)) ? JSON.parse(readFileSync(join(out, f), 'utf8')) : null);
const av = load('availability.json');
const bk = load('booking.json');
const cs = load('calendar-sync-busy.json');
const wd = load('webhook-dispatch.json');
const e2e = load('create-to-webhook.json');
const burst = load('system-create-burst.json');
const sustained = load('system-sustained.json');
const spread = load('system-sustained-spread.json');
const sslots = load('system-slots.json');
const floor = load('system-floor.json');
const rfloor = load('radicale-floor.json');
const sfloor = load('slots-floor.json');
const cfloor = load('create-floor.json');

const n = (x, d = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d).replace(/\.0+$/, '') : '–');
const ok = (cond) => (cond === undefined ? '–' : cond ? 'met' : '**not met**');
/** The sustained target against Radicale's own rate (radicale-floor): the calendar layouts where even a core to itself stays under 150/s. */
const radicaleVerdict = (floor) => {
  const below = [
    [floor.one_calendar, 'one calendar'],
    [floor.ten_calendars, '10 calendars'],
  ]
    .filter(([run]) => run && run.one_core_ceiling_at_end_puts_per_s < 150)
    .map(([, label]) => label);
  return below.length > 0 ? `**out of reach with Radicale here: ${below.join(', ')}**` : '–';
};
/**
 * When the design's own floor measured in the same run (slots-floor: two hops with the internal credential,
 * no service code) is already past a latency target, the verdict says so: no system of this design meets it here.
 */
const beyondFloor = (floor, metric, target) => {
  const v = floor?.two_hops_credential?.[metric];
  return typeof v === 'number' && v > target ? `; **out of reach here**: two hops with the credential alone take ${n(v)} ms (slots-floor)` : '';
};

// The floors (radicale-floor, slots-floor): the physical limit of a whole-system row, measured in the same run.
const calendarsText = (r) => (r.calendars === 1 ? 'one calendar' : `${r.calendars} calendars`);
/** Radicale alone into one or ten calendars: what the sustained rows' "physical limit" column shows. */
const radicaleLimit = (r) =>
  r
    ? `${n(r.puts_per_s)} Bookings/s: Radicale alone takes ${n(r.puts_per_s)} PUTs/s into ${calendarsText(r)} (${r.writers} writers, ${r.puts} PUTs; radicale-floor), ${n(r.one_core_ceiling_at_end_puts_per_s)} /s with a core to itself at the calendar's end size`
    : null;
const radicaleDetail = (r) =>
  `${calendarsText(r)} (${r.events_per_calendar_at_end} events each at the end): ${n(r.puts_per_s)} PUTs/s; Radicale ${n(r.radicale_cpu_ms_per_put)} ms CPU per PUT (first 100 ${n(r.first_100?.radicale_cpu_ms_per_put)}, last 100 ${n(r.last_100?.radicale_cpu_ms_per_put)}; p50 ${n(r.first_100?.latency?.p50_ms, 0)} → ${n(r.last_100?.latency?.p50_ms, 0)} ms), ${n(r.radicale_core_pct?.mean_pct, 0)} % of one core on average, at most ${n(r.radicale_core_pct?.max_pct, 0)} % (${r.radicale_max_threads} threads at most); client ${n(r.client_cpu_ms_per_put)} ms per PUT; ${n(r.connections_opened_per_put, 2)} TCP connections opened per PUT; machine ${n(r.machine_busy_pct, 0)} % busy`;
/** One Slots figure (p50_ms, p99_ms, requests_per_s) of the floors: one hop from system-slots, two hops from slots-floor. */
const slotsLimit = (base, sf, bytes, key, unit) => {
  const v = (x) => `${n(x?.[key], key === 'requests_per_s' ? 0 : 1)} ${unit}`;
  const one = `${v(base)} (bare Node HTTP, one hop${bytes ? `, same ${bytes} B` : ''})`;
  if (!sf) return one;
  const other = bytes && sf.response_bytes !== bytes ? ` (on a ${sf.response_bytes} B answer)` : '';
  return `${one}; two bare hops ${v(sf.two_hops)}, with the internal credential (jose) ${v(sf.two_hops_credential)}${other} (slots-floor)`;
};
const slotsFloorCpu = (sf) => {
  if (!sf) return '–';
  const c = (x) => x?.cpu_us_per_request ?? {};
  const two = c(sf.two_hops);
  const cred = c(sf.two_hops_credential);
  return `two bare hops: proxy ${n(two.proxy, 0)} + server ${n(two.server, 0)}; with the credential: proxy ${n(cred.proxy, 0)} + server ${n(cred.server, 0)}; one hop: server ${n(c(sf.one_hop).server, 0)} (load generator ${n(c(sf.one_hop)['load generator'], 0)}–${n(cred['load generator'], 0)}; slots-floor, ${sf.scenario?.window_s} s each, load at its start ${loadAvg(sf)}, CPU stolen by the host ${stolen(sf.machine?.steal_pct)})`;
};

// The create floor (create-floor): the burst's physical limit, rendered in a row of its own under the burst's.
/** The floor's creates/s and its share of the pgbench run right after it. */
const createFloorRate = (v) => `${n(v?.creates_per_s)} /s = ${n(100 * v?.ratio_of_pgbench)} % of pgbench`;
/** CPU µs per create of each process of a create-floor variant (its figures are ms), the machine last. */
const createFloorCpu = (v) => Object.entries(v?.cpu_ms_per_create ?? {}).map(([k, x]) => `${k} ${n(1000 * x, 0)}`).join(', ');
/**
 * The burst against the design's floor measured in the same run: when even the floor (three hops with the
 * credential and the create transaction, no service code) stays under the target's share of pgbench, no system of
 * this design reaches it here; otherwise how far the burst is from the floor, each as its share of its own
 * pgbench run (the machine's speed moves between runs minutes apart; the shares move less).
 */
const createFloorVerdict = (cf, burst, target = 0.4) => {
  const r = cf?.three_hops?.ratio_of_pgbench;
  if (typeof r !== 'number' || !Number.isFinite(r)) return '–';
  if (r < target) return `**out of reach for the design here**: the floor itself reaches ${n(100 * r)} % of pgbench (< ${n(100 * target)} %)`;
  const b = burst?.ratio_of_pgbench;
  if (typeof b !== 'number' || !Number.isFinite(b)) return `the floor reaches ${n(100 * r)} % of pgbench (≥ ${n(100 * target)} %): not out of reach by the floor`;
  return `not out of reach by the floor (${n(100 * r)} % of pgbench); the burst is at ${n((100 * b) / r, 0)} % of its floor (${n(100 * b)} % of pgbench), ${n(r / b)}× below it`;
};

// Headline: the whole system (issue 18). Each figure beside its target, the stubbed locator, the physical
// limit measured in the same run, the load average when its bench started and the CPU the host stole.
const loadAvg = (r) => (r?.machine?.loadavg_before ? r.machine.loadavg_before.map((x) => n(x, 2)).join(' ') : '–');
/** A steal share in % (harness machineFacts, proc-stat.ts stealPct); '–' for figures from before it was measured. */
const stolen = (pct) => (typeof pct === 'number' && Number.isFinite(pct) ? `${n(pct)} %` : '–');
/** The steal during the run of a bench's physical limit (pgbench of the burst, the bare server of the Slots run), where it has one. */
const limitStolen = (r) => {
  if (typeof r?.pgbench?.steal_pct === 'number') return ` (pgbench ${stolen(r.pgbench.steal_pct)})`;
  if (typeof r?.static_baseline?.steal_pct === 'number') return ` (bare server ${stolen(r.static_baseline.steal_pct)})`;
  return '';
};
/** The last column: load average at the bench's start; CPU stolen by the host during its measured interval (and its physical limit's). */
const loadAt = (r) => `${loadAvg(r)}; ${stolen(r?.machine?.steal_pct)}${limitStolen(r)}`;
const groupsText = (g, unit = 1, d = 2) => Object.entries(g ?? {}).map(([k, v]) => `${k} ${n(v * unit, d)}`).join(', ');
const checksRow = (r, label) => (r?.failed_checks?.length ? [[`${label}: **FAILED CHECKS**`, r.failed_checks.join('; '), '–', '**failed**', '–', '–', loadAt(r)]] : []);
const head = [];
/**
 * The burst's rounds (system-create-burst.bench.ts, BENCH_BURST_ROUNDS): its top-level figures are the median
 * round's; beside each the range over the rounds. '' for figures written before rounds (one run, shown as it was).
 */
const burstRounds = (r) => (Array.isArray(r?.rounds) && r.rounds.length > 0 ? r.rounds : null);
const spanOf = (rounds, pick, d = 1) => {
  const xs = rounds.map(pick).filter((x) => typeof x === 'number' && Number.isFinite(x));
  if (!xs.length) return '–';
  const [lo, hi] = [n(Math.min(...xs), d), n(Math.max(...xs), d)];
  return lo === hi ? lo : `${lo}–${hi}`;
};
const roundsNote = (r, text) => {
  const rounds = burstRounds(r);
  if (!rounds) return '';
  return rounds.length === 1 ? '; one round' : `; ${text(rounds)}`;
};
if (burst) {
  const c = burst.cpu_ms_per_create;
  const nonCreated = Object.entries(burst.non_201 ?? {}).map(([s, k]) => `${k}× ${s}`).join(', ') || 'none';
  const headline = roundsNote(burst, (rs) => `median of ${rs.length} rounds (round ${burst.median_round}); range ${spanOf(rs, (x) => 100 * x.ratio_of_pgbench)} % (${spanOf(rs, (x) => x.creates_per_s)} /s)`);
  const pgRange = roundsNote(burst, (rs) => `${spanOf(rs, (x) => x.pgbench_tps)} tps over the rounds, each right after its own burst`);
  const p99Range = roundsNote(burst, (rs) => `p99 range ${spanOf(rs, (x) => x.p99_ms)} ms over the rounds`);
  const cpuRange = roundsNote(burst, (rs) => `range ${spanOf(rs, (x) => x.cpu_ms_per_create?.services_postgres_rabbitmq)} (six + Postgres + RabbitMQ), machine ${spanOf(rs, (x) => x.cpu_ms_per_create?.machine_total)} over the rounds`);
  const stealRange = roundsNote(burst, (rs) => `over the rounds ${spanOf(rs, (x) => x.steal_pct)} % (pgbench ${spanOf(rs, (x) => x.pgbench_steal_pct)} %)`);
  head.push(
    [`Creates through the gateway, 32 connections, ${n(burst.scenario?.duration_s ?? 10)} s burst`, `${n(burst.creates_per_s)} /s = ${n(100 * burst.ratio_of_pgbench)} % of pgbench${headline}`, '≥ 40 % of pgbench', ok(burst.met?.ratio), bk ? `${n(bk.http.bookings_per_s)} /s = ${n(100 * bk.ratio_of_pgbench)} % (part: availability stubbed)` : '–', `${n(burst.pgbench.tps)} tps (pgbench, the create transaction, 32 clients, same run)${pgRange}`, `${loadAt(burst)}${stealRange}`],
    ['… p50 / p99', `${n(burst.p50_ms)} / ${n(burst.p99_ms)} ms${p99Range}`, 'p99 ≤ 100 ms', ok(burst.met?.p99), bk ? `${n(bk.http.p50_ms)} / ${n(bk.http.p99_ms)} ms` : '–', `${n(burst.pgbench.p50_ms)} / ${n(burst.pgbench.p99_ms)} ms (pgbench)`, loadAt(burst)],
    ['… answers other than 201; background work pending when the burst ended', `${nonCreated}; ${burst.backlog_at_end.calendar_pending} calendar writes, ${burst.backlog_at_end.webhooks_pending} booking.created webhooks`, 'none; may lag, must catch up', '–', '–', '–', loadAt(burst)],
    ['… CPU per create during the burst (ms, /proc, every process)', `${n(c.services_postgres_rabbitmq)} across the six services + Postgres + RabbitMQ; machine ${n(c.machine_total)} (${groupsText(c.by_group)}; machine ${n(c.machine_busy_pct, 0)} % busy)${cpuRange}`, '–', '–', bk?.http?.cpu ? `booking ${n(bk.http.cpu.booking_ms_per_request)} + gateway ${n(bk.http.cpu.gateway_ms_per_request)} (part: availability stubbed)` : '–', '–', loadAt(burst)],
    ...checksRow(burst, 'Burst'),
  );
}

if (cfloor) {
  const t = cfloor.three_hops;
  const w = cfloor.two_hops;
  head.push(
    [
      "… the design's floor: three hops with the credential and the create transaction, no service code (create-floor)",
      `${createFloorRate(t)}, p50 / p99 ${n(t?.p50_ms)} / ${n(t?.p99_ms)} ms (${cfloor.scenario?.slot_check ? `slot checks ${cfloor.scenario.slot_check}` : 'one slot-check call per create: an upper bound'}${cfloor.scenario?.commit ? `; creates ${cfloor.scenario.commit}` : ''}); without the slot-check hop ${createFloorRate(w)}, p50 / p99 ${n(w?.p50_ms)} / ${n(w?.p99_ms)} ms. CPU per create (µs, /proc): ${createFloorCpu(t)}; without the slot check: ${createFloorCpu(w)}`,
      '≥ 40 % of pgbench (the target above)',
      createFloorVerdict(cfloor, burst),
      '–',
      `${n(cfloor.pgbench?.tps)} tps, p50 / p99 ${n(cfloor.pgbench?.p50_ms)} / ${n(cfloor.pgbench?.p99_ms)} ms (pgbench, the same transaction, ${cfloor.scenario?.connections} clients, right after)`,
      loadAt(cfloor),
    ],
    ...checksRow(cfloor, 'Create floor'),
  );
}
if (sustained) {
  const c = sustained.cpu_ms_per_booking;
  head.push(
    [`Sustained, every Booking synced to the calendar and its webhook delivered (${sustained.scenario.rate_per_s}/s offered for ${sustained.scenario.duration_s} s)`, `${n(sustained.sustained_per_s)} /s (${sustained.bookings_stored} Bookings, ${sustained.created} answered 201${Object.keys(sustained.non_201 ?? {}).length ? `, ${Object.entries(sustained.non_201).map(([s, k]) => `${k}× ${s}`).join(', ')}` : ''}; all done ${n(sustained.all_synced_and_delivered_s)} s after the first create; creates p50 ${n(sustained.create_p50_ms, 0)} ms, p99 ${n(sustained.create_p99_ms, 0)} ms)`, '≥ 150 /s', ok(sustained.met?.sustained), e2e ? `create → webhook at ${e2e.scenario.rate_per_s}/s: p99 ${n(e2e.webhook_latency_ms.p99)} ms` : '–', [radicaleLimit(rfloor?.one_calendar), `${sustained.scenario.rate_per_s} /s offered (load generator sent ${n(sustained.sent_per_s)} /s)`].filter(Boolean).join('; '), loadAt(sustained)],
    ['… CPU per Booking incl. its calendar write and events, six services + Postgres + RabbitMQ (ms)', `${n(c.services_postgres_rabbitmq)} (${groupsText(c.by_group)}); Radicale ${n(c.by_group?.radicale ?? 0)}; machine ${n(c.machine_total)}`, '≤ 8 ms', ok(sustained.met?.cpu), e2e?.machine_cpu_ms_per_booking ? `create → webhook run: ${n(Object.values(e2e.machine_cpu_ms_per_booking).reduce((a, b) => a + b, 0))} ms machine` : '–', `${n((1000 * (sustained.machine?.cpus ?? 2)) / sustained.scenario.rate_per_s)} ms of CPU per Booking on ${sustained.machine?.cpus ?? 2} cores at ${sustained.scenario.rate_per_s}/s`, loadAt(sustained)],
    ...(floor
      ? [
          [
            '… the floor under that figure: RabbitMQ and Postgres alone, no service code (system-floor)',
            `${n(floor.floor_ms_per_booking_rabbitmq_postgres)} ms: RabbitMQ ${n(floor.broker.rabbitmq_cpu_ms_per_booking)} (3 publishes with confirms, 6 deliveries with acks, quorum queues, at ${n(floor.broker.achieved_per_s, 0)} Bookings/s) + Postgres ${n(floor.postgres.postgres_cpu_ms_per_booking)} (${floor.postgres.transactions_per_booking} one-row commits × ${n(floor.postgres.postgres_cpu_ms_per_commit, 3)} ms); the AMQP client side alone ${n(floor.broker.client_cpu_ms_per_booking)} ms`,
            '≤ 8 ms (the target above)',
            '–',
            '–',
            '–',
            loadAt(floor),
          ],
        ]
      : []),
    ...(rfloor
      ? [
          [
            "… the calendar provider's own limit: Radicale alone, fresh, nice 0, taking calendar-sync's one PUT per Booking (radicale-floor)",
            [rfloor.one_calendar, rfloor.ten_calendars].filter(Boolean).map(radicaleDetail).join('; '),
            '≥ 150 /s (the target above)',
            radicaleVerdict(rfloor),
            '–',
            '–',
            loadAt(rfloor),
          ],
          ...checksRow(rfloor, 'Radicale alone'),
        ]
      : []),
    ...(spread
      ? [
          [
            `… the same spread over ${spread.scenario.hosts} hosts, each with its own Radicale calendar (system-sustained-spread)`,
            `${n(spread.sustained_per_s)} /s (${spread.bookings_stored} Bookings; all done ${n(spread.all_synced_and_delivered_s)} s after the first create); CPU per Booking ${n(spread.cpu_ms_per_booking.services_postgres_rabbitmq)} ms across the six services + Postgres + RabbitMQ (${groupsText(spread.cpu_ms_per_booking.by_group)}; machine ${n(spread.cpu_ms_per_booking.machine_busy_pct, 0)} % busy)`,
            '≥ 150 /s; ≤ 8 ms',
            `${ok(spread.met?.sustained)}; ${ok(spread.met?.cpu)}`,
            '–',
            [radicaleLimit(rfloor?.ten_calendars), `${n((1000 * (spread.machine?.cpus ?? 2)) / spread.sustained_per_s)} ms of CPU per Booking on ${spread.machine?.cpus ?? 2} cores at the rate reached`].filter(Boolean).join('; '),
            loadAt(spread),
          ],
          ...checksRow(spread, 'Sustained, spread'),
        ]
      : []),
    ['… 201 → synced / 201 → webhook, p50 / p99', `${n(sustained.synced_lag_ms.p50, 0)} / ${n(sustained.synced_lag_ms.p99, 0)} ms; ${n(sustained.webhook_lag_ms.p50, 0)} / ${n(sustained.webhook_lag_ms.p99, 0)} ms`, '–', '–', '–', '–', loadAt(sustained)],
    ...checksRow(sustained, 'Sustained'),
  );
}
if (sslots) {
  const g = sslots.gateway;
  const base = sslots.static_baseline;
  const part = av?.http?.gateway;
  const x = sslots.expiries_in_window;
  const c = sslots.cpu_ms_per_request;
  head.push(
    [`Slots through the gateway, 50 connections, ${sslots.scenario.window_s} s with cache expiries inside: p50`, `${n(g.p50_ms)} ms`, '≤ 5 ms', ok(sslots.met?.p50) + beyondFloor(sfloor, 'p50_ms', 5), part ? `${n(part.p50_ms)} ms (part: calendar-sync stubbed)` : '–', slotsLimit(base, sfloor, sslots.response_bytes, 'p50_ms', 'ms'), loadAt(sslots)],
    ['… p99', `${n(g.p99_ms)} ms`, '≤ 30 ms', ok(sslots.met?.p99) + beyondFloor(sfloor, 'p99_ms', 30), part ? `${n(part.p99_ms)} ms` : '–', slotsLimit(base, sfloor, undefined, 'p99_ms', 'ms'), loadAt(sslots)],
    ['… throughput', `${n(g.requests_per_s, 0)} req/s`, '–', '–', part ? `${n(part.requests_per_s, 0)} req/s` : '–', slotsLimit(base, sfloor, undefined, 'requests_per_s', 'req/s'), loadAt(sslots)],
    ['… CPU per request (µs, /proc, every process)', `${n(1000 * c.services_postgres_rabbitmq, 0)} across the six services + Postgres + RabbitMQ; machine ${n(1000 * c.machine_total, 0)} (${groupsText(c.by_group, 1000, 0)})`, '–', '–', part?.cpu_us_per_request ? `gateway ${n(part.cpu_us_per_request.gateway, 0)} + availability ${n(part.cpu_us_per_request.availability, 0)}` : '–', slotsFloorCpu(sfloor), loadAt(sslots)],
    ['… expiries inside the window', `${x.slots_answers_computed} Slots answers computed over ${x.slots_cache_lifetimes} cache lifetimes of ${n(x.slots_cache_ttl_ms / 1000)} s; ${x.snapshot_refreshes} calendar-sync snapshot refreshes (${x.snapshot_full_reads} full reads; refresher every ${n(x.snapshot_refresh_interval_ms / 1000)} s)`, '≥ 1 of each', x.snapshot_refreshes >= 1 && x.slots_answers_computed >= 1 ? 'met' : '**not met**', '–', '–', loadAt(sslots)],
    ...checksRow(sslots, 'Slots'),
    ...checksRow(sfloor, 'Slots, two bare hops'),
  );
}

const rows = [];
if (av) {
  rows.push(['Slots engine, 31 days, 30-min grid, 500 busy + 1,000 Bookings: p50 (part)', `${n(av.engine_ms.p50_ms, 3)} ms`, '≤ 2 ms', '–', '–', ok(av.engine_ms.p50_ms <= 2)]);
  const g = av.http?.gateway;
  const base = av.http?.static_baseline;
  rows.push(['Slots through the gateway, calendar-sync stubbed, 50 concurrent: p50 (part)', `${n(g?.p50_ms)} ms`, '≤ 10 ms', `${n(base?.p50_ms)} ms (bare Node HTTP, same ${av.http?.response_bytes} B body)`, `${n(g?.p50_ms / Math.max(base?.p50_ms, 1))}×`, ok(g?.p50_ms <= 10)]);
  rows.push(['Slots through the gateway, calendar-sync stubbed, 50 concurrent: p99 (part)', `${n(g?.p99_ms)} ms`, '≤ 30 ms', `${n(base?.p99_ms)} ms`, `${n(g?.p99_ms / Math.max(base?.p99_ms, 1))}×`, ok(g?.p99_ms <= 30)]);
  rows.push(['Slots through the gateway, calendar-sync stubbed, 50 concurrent: throughput (part)', `${n(g?.requests_per_s, 0)} req/s`, '–', `${n(base?.requests_per_s, 0)} req/s`, `${n((100 * g?.requests_per_s) / base?.requests_per_s)} %`, '–']);
  if (g?.cpu_us_per_request) {
    const direct = av.http?.availability_direct;
    rows.push([
      'Slots, calendar-sync stubbed: CPU per request (µs, from /proc) (part)',
      `gateway ${n(g.cpu_us_per_request.gateway, 0)} + availability ${n(g.cpu_us_per_request.availability, 0)} behind it; availability alone ${n(direct?.cpu_us_per_request?.availability, 0)} (${n(direct?.requests_per_s, 0)} req/s, p50 ${n(direct?.p50_ms)} ms)`,
      '–',
      '–',
      '–',
      '–',
    ]);
  }
}
if (bk) {
  const batch = bk.http.mean_batch === undefined ? '' : ` (group commit, mean ${n(bk.http.mean_batch)} per transaction)`;
  rows.push(['Booking creates through the gateway, availability stubbed, 32 clients, distinct slots (part)', `${n(bk.http.bookings_per_s)} /s${batch}`, '≥ 40 % of pgbench', `${n(bk.pgbench.tps)} tps (pgbench, same SQL, one Booking per transaction)`, `${n(100 * bk.ratio_of_pgbench)} %`, ok(bk.ratio_of_pgbench >= 0.4)]);
  rows.push(['Booking creates, availability stubbed: p50 / p99 (part)', `${n(bk.http.p50_ms)} / ${n(bk.http.p99_ms)} ms`, 'p99 ≤ 50 ms', `${n(bk.pgbench.p50_ms)} / ${n(bk.pgbench.p99_ms)} ms`, '–', ok(bk.http.p99_ms <= 50)]);
  if (bk.pgbench_batched) {
    const b = bk.pgbench_batched;
    rows.push([`… for reference: pgbench calling booking.create_bookings with ${b.batch_size} creates per call (the batched form's ceiling)`, '–', '–', `${n(b.bookings_per_s)} Bookings/s (${n(b.calls_per_s)} calls/s)`, `${n(100 * bk.ratio_of_pgbench_batched)} %`, '–']);
  }
  rows.push(['Booking creates straight to booking (no gateway hop, availability stubbed) (part)', `${n(bk.booking_direct.bookings_per_s)} /s, p99 ${n(bk.booking_direct.p99_ms)} ms`, '–', '–', '–', '–']);
}
if (e2e) {
  rows.push([`Create 201 → booking.created webhook at a local receiver, ${e2e.scenario.rate_per_s} creates/s: p50`, `${n(e2e.webhook_latency_ms.p50)} ms`, '≤ 100 ms', '–', '–', ok(e2e.webhook_latency_ms.p50 <= 100)]);
  rows.push(['… p99', `${n(e2e.webhook_latency_ms.p99)} ms`, '≤ 500 ms', '–', '–', ok(e2e.webhook_latency_ms.p99 <= 500)]);
  if (e2e.cpu_ms_per_booking) {
    const cpu = e2e.cpu_ms_per_booking;
    const total = Object.values(cpu).reduce((a, b) => a + b, 0);
    rows.push([
      '… CPU per Booking in the Node services (create, events, calendar write, two webhooks)',
      `${n(total)} ms (${Object.entries(cpu).map(([k, v]) => `${k} ${n(v)}`).join(', ')})`,
      '–',
      `${n(2000 / e2e.scenario.rate_per_s)} ms available per Booking on 2 cores at ${e2e.scenario.rate_per_s}/s`,
      `${n((100 * total) / (2000 / e2e.scenario.rate_per_s))} %`,
      '–',
    ]);
  }
  if (e2e.machine_cpu_ms_per_booking) {
    const cpu = e2e.machine_cpu_ms_per_booking;
    const total = Object.values(cpu).reduce((a, b) => a + b, 0);
    rows.push([
      '… CPU per Booking on the whole machine (every process, incl. Postgres, RabbitMQ, Radicale, load generator)',
      `${n(total)} ms (${Object.entries(cpu).map(([k, v]) => `${k} ${n(v)}`).join(', ')}); CPU stolen by the host during the run ${stolen(e2e.machine?.steal_pct)}`,
      '–',
      `${n(2000 / e2e.scenario.rate_per_s)} ms available`,
      `${n((100 * total) / (2000 / e2e.scenario.rate_per_s))} %`,
      '–',
    ]);
  }
  if (e2e.stages_ms) {
    const st = e2e.stages_ms;
    const f = (k) => (st[k] ? `${n(st[k].p50)} / ${n(st[k].p99)}` : '–');
    rows.push([
      '… where the time goes, p50 / p99 ms',
      `create request ${f('create_request')}; 201 → relay round ${f('created_to_relay_round')}; relay round → webhook-dispatch inbox ${f('relay_round_to_dispatch_inbox')}; inbox → delivered ${f('dispatch_inbox_to_delivered')}`,
      '–',
      '–',
      '–',
      '–',
    ]);
  }
}
if (wd) rows.push([`Event on the bus → signed webhook received (webhook-dispatch alone), ${wd.rate_per_s}/s: p50 / p99 (part)`, `${n(wd.p50_ms)} / ${n(wd.p99_ms)} ms`, '–', '–', '–', '–']);
if (cs) {
  rows.push([`Calendar read, ${cs.calendar_events} events in Radicale: full / ctag probe (median) (part)`, `${n(cs.full_read_ms_median)} / ${n(cs.ctag_probe_refresh_ms_median)} ms`, '–', '–', '–', '–']);
  rows.push(['Busy times from a warm snapshot (calendar-sync alone): p50 / p99 (part)', `${n(cs.warm_snapshot_latency_ms_p50)} / ${n(cs.warm_snapshot_latency_ms_p99)} ms (${n(cs.warm_snapshot_rps, 0)} req/s)`, '–', '–', '–', '–']);
}

const md = `# Benchmarks

Produced by \`pnpm bench\` (scripts/bench.mjs), which runs every benchmark below in one run and writes
this page; raw figures are in \`.data/bench/*.json\`. Targets come from the issues; each baseline is
the physical limit of this machine for the same work, measured in the same run. Where the CPU of a
Booking goes, the floor under it and how to profile: [performance.md](performance.md).

## Machine

| | |
|---|---|
| run | ${started.toISOString()}${process.argv.includes("--report") ? " (page re-rendered with --report from the last results of each benchmark; each row's load column is from its own run)" : ""} |
| OS / kernel | ${host.os} / ${host.kernel} |
| CPU | ${host.cpu} |
| memory | ${host.memory} |
| Node.js | ${host.node} |
| PostgreSQL | ${host.postgres} |
| RabbitMQ | ${host.rabbitmq} |
| load average at start | ${host.loadavg} |

## Whole system (issue 18)

The system as \`npm start\` runs it: all six services, the real slot check and busy reads, calendar writes
to Radicale, webhooks to a local receiver, on this machine. Each figure beside its target, its locator (the
same path with parts stubbed, from the table below), the physical limit measured in the same run, the
load average when its benchmark started (compare with the number of CPUs), and the share of the CPUs the
host took away during its measured interval (steal, below; in brackets during the physical limit's run).

| figure | whole system | target | verdict | locator (part) | physical limit, same run | load at start; CPU stolen by the host during the run |
|---|---|---|---|---|---|---|
${head.length ? head.map((r) => `| ${r.join(' | ')} |`).join('\n') : '| (no whole-system results in .data/bench) | – | – | – | – | – | – |'}

## Locators and parts

Rows marked (part) stub out what lies behind the call or measure one service alone: they locate where the
time goes, they are not what a user gets.

| figure | measured | target | baseline | ratio | verdict |
|---|---|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

## How each is measured

The whole-system benchmarks (tests-e2e/bench/, shared helpers in harness.ts) start the system with
tests-e2e/support/system.ts: the esbuild bundles \`npm start\` runs, one node process per service, with
\`npm start\`'s environment (NODE_ENV development, every other setting at its default), their own database,
AMQP prefix and Radicale. CPU per request is read from /proc for every process on the machine, by group:
each of our six services (by pid), Postgres (all backends), RabbitMQ, our Radicale, the bench process (load
generator and webhook receiver), kernel threads and other; the machine total comes from /proc/stat, and
"unattributed" is what no running process accounts for (processes that ended, interrupts). Postgres and
RabbitMQ are shared servers, so other users of the machine count there too.

This machine is a virtual machine: its host runs other guests on the same cores and takes CPU time away
from it when they need it ("steal", the 8th figure of the \`cpu\` line of /proc/stat: time this machine had
work ready and no CPU to run it on). It varies from minute to minute and changes every figure here: the same
burst run a few minutes apart has given creates/s and pgbench tps several times apart. Each whole-system
benchmark and floor therefore records the share of the CPUs stolen during its measured interval (stolen
ticks over elapsed time × CPUs, from /proc/stat before and after; over all its measured intervals together
for a floor with several, each also in its own result), and the burst and Slots runs also during their
physical limit (pgbench, the bare server). Compare figures only between runs with a similar share. The
machine totals count stolen time as busy, as they always have: a machine "90 % busy" with 20 % stolen did
70 % of work.

- **Creates, burst** (tests-e2e/bench/system-create-burst.bench.ts): a tenant with a Radicale calendar
  and a 5-minute Event Type (host available all day; every start within calendar-sync's 90-day cached
  range); 64 warm-up creates whose calendar writes and webhooks finish first; then 32 closed-loop
  connections for BENCH_DURATION_S (10 s) through the gateway, each request a distinct free start with its
  own Idempotency-Key. Creates/s and p50/p99 count the 201s; any other answer fails the run. CPU per create
  covers the burst only; the calendar writes and webhooks still pending at its end are counted. The system
  is then stopped and pgbench runs the create transaction (services/booking/bench/pgbench-booking.ts, with
  payloads from the run) with 32 clients for the same time: the ratio is creates/s over its tps. That is one
  round; the bench runs BENCH_BURST_ROUNDS of them (3), each with the system started afresh (new database,
  Radicale and warm-up: a running system's calendar and tables grow with every burst, and the next would
  measure a larger system), so each round's ratio is its own burst over its own pgbench, back to back on the
  same machine. The figures shown are the median round's by ratio (the lower middle one of an even count),
  and beside them the range over the rounds: this machine's speed varies between runs minutes apart even
  with no CPU stolen, and one run is a poor headline.
- **Sustained** (tests-e2e/bench/system-sustained.bench.ts): the same setup; creates sent on a fixed
  schedule at BENCH_RATE (150/s) for BENCH_DURATION_S (10 s); then the run waits until every Booking has
  calendar.status synced (calendar-sync wrote its event to Radicale and booking heard so) and its
  booking.created webhook reached the receiver. The sustained rate is created / (first create → last
  Booking synced and delivered); CPU per Booking is over that same interval, so it includes each Booking's
  calendar write and events; the target sums the six services, Postgres and RabbitMQ (Radicale, the
  calendar provider, is shown apart). The calendar must hold an event per Booking at the end.
- **Slots, whole system** (tests-e2e/bench/system-slots.bench.ts): the scenario of the Slots locator
  (services/availability/bench/fixture.ts) built through the system: 1,000 Bookings made through the API and
  written to Radicale by calendar-sync, 500 busy events PUT into the host's calendar by CalDAV, the
  07:00–22:00 schedule; the run waits until the Slots answer is exactly the one the fixture implies. Then
  autocannon, 50 connections, through the gateway for BENCH_SLOTS_WINDOW_S (65 s): availability's Slots
  cache keeps an answer 5 s (SLOTS_CACHE_TTL_MS) and calendar-sync's refresher renews the snapshot every
  60 s (REFRESH_INTERVAL_MS), and the window starts just after the refresher round that read the busy
  events, so it holds the next refresh and 13 cache lifetimes. Both are counted: Slots answers computed
  (calendar-sync's busy requests, /metrics) and snapshot refreshes (fetched_at, polled each second). The
  physical limit is a bare Node HTTP server answering the same bytes, same run.
- **Two bare hops, the Slots floor** (tests-e2e/bench/slots-floor.bench.ts), right after the Slots run, on
  the answer it measured byte for byte: the design answers Slots in two Node HTTP hops (gateway →
  availability), so a bare node:http proxy forwarding each request with undici (the gateway's client:
  keep-alive pool, dispatch API) and streaming the answer back, in front of the bare server; then the
  same with the internal credential signed at the proxy and checked at the server by libs/http's signer
  and verifier (jose), the floor of the design as required. Same load generator (autocannon, 50
  connections) and window as the Slots figure, each process at the gateway's and availability's priority;
  CPU per request of each process from /proc.
- **The create floor** (tests-e2e/bench/create-floor.bench.ts), right after the burst: the design creates a
  Booking in three hops and one transaction, so the burst's load generator (32 closed-loop connections, the
  burst's body shape, BENCH_DURATION_S) POSTs to a bare node:http proxy at the gateway's position (signs the
  internal credential with libs/http's signer, forwards with undici like the gateway's forward client) in
  front of a bare node:http server at booking's position (checks the credential with libs/http's verifier,
  asks a bare availability server about the slot with a credential of its own, sharing calls as booking does, commits
  the creates as booking does (group commit: one call of booking.create_bookings for the creates asked while two are
  out, pgbench-booking.ts's item per create) through pg with a pool of booking's size,
  answers 201 with a body of the create's answer size); then the same without the slot-check hop, each on a
  fresh database, and pgbench of the same transaction (32 clients, same duration) right after. CPU per create
  of each process from /proc. No service code runs: if this stays under 40 % of pgbench, so does every system
  of this design on this machine.
- **Radicale alone, the sustained floor** (tests-e2e/bench/radicale-floor.bench.ts): a fresh Radicale started
  as the system harness starts it (same config and storage) but at nice 0 and alone; the sustained bench's
  64 warm-up events, then 1,500 new events PUT as calendar-sync writes a Booking (one PUT with
  If-None-Match: \*, its iCalendar body; calendar-sync sends nothing else per Booking) by 4 concurrent
  writers (calendar-sync's prefetch), into one calendar and, on another fresh Radicale, round-robin into 10
  (the sustained and sustained-spread benches). PUTs/s, Radicale's CPU per PUT (its process, every thread)
  and in % of one core (Python's GIL: at most about 100 %), the first 100 PUTs against the last 100, the
  client's CPU and connections per PUT (Radicale closes each). No system syncs more Bookings per second to
  this provider on this machine; "with a core to itself" is 1000 ms over Radicale's CPU per PUT at the
  calendar's end size.
- **Slots (part)** (services/availability/bench/slots.bench.ts), the locator of the whole-system Slots: the pure engine on inputs already resolved to
  instants, many iterations; then autocannon with 50 connections against the gateway (key auth, rate
  limit, forwarding) in front of availability, with calendar-sync stubbed by a static HTTP server
  serving the 500 busy intervals; the baseline is a bare Node HTTP server answering the same bytes.
- **Booking creates (part)** (services/booking/bench/create.bench.ts), the locator of the burst: gateway and booking as processes,
  32 concurrent clients creating Bookings on distinct slots (availability stubbed to say bookable);
  the baseline is pgbench running the same SQL transaction (idempotency row + booking insert under the
  exclusion constraint + outbox row), one Booking per transaction, with 32 clients for the same time. The
  service group-commits creates (docs/booking.md, "Group commit"); the reference row runs its batch call
  at the HTTP run's mean batch size.
- **Create → webhook** (tests-e2e/bench/create-to-webhook.bench.ts): the whole system as separate
  processes (all six services, Radicale), creates at a steady rate, time from each 201 to the
  booking.created delivery at a local receiver. CPU per Booking is read from /proc for every process
  on the machine over the run. The stages come from the services' own rows (outbox \`published_at\` is
  the start of the relay round that published the event, so "201 → relay round" is negative when the
  relay had the event before the client had its answer).
- **Webhook dispatch alone (part)** (services/webhook-dispatch/bench/dispatch.bench.ts) and **calendar reads (part)**
  (services/calendar-sync/bench/busy.bench.ts) locate where time goes in the paths above.

Every figure depends on what else the two cores are doing: compare the load average above with 2, and
each run's CPU stolen by the host.
`;
writeFileSync(reportFile, md);
console.log(`bench: wrote ${reportFile} (${head.length} whole-system figures, ${rows.length} locators)`);
if (failedBenches.length > 0) {
  console.error(`bench: FAILED: ${failedBenches.join(', ')} (the page shows their failed checks, or no figures when they wrote none)`);
  process.exitCode = 1;
}
