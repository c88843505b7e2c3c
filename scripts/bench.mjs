// `pnpm bench`: every benchmark in one run, then docs/benchmarks.md with the machine, each figure
// beside its target and its physical-limit baseline measured in the same run.
// `pnpm bench --report` only re-renders docs/benchmarks.md from the last results in .data/bench/.
import { spawnSync, execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, totalmem, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.data', 'bench');
const BENCHES = [
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
if (!process.argv.includes('--report')) {
  mkdirSync(out, { recursive: true });
  for (const [i, b] of BENCHES.entries()) {
    console.log(`[bench ${i + 1}/${BENCHES.length}] ${b.name} (${b.script})`);
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ['--import', 'tsx', b.script], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    console.log(`[bench ${i + 1}/${BENCHES.length}] ${b.name} ${r.status === 0 ? 'done' : `FAILED (exit ${r.status})`} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
}

const load = (f) => (existsSync(join(out, f)) ? JSON.parse(readFileSync(join(out, f), 'utf8')) : null);
const av = load('availability.json');
const bk = load('booking.json');
const cs = load('calendar-sync-busy.json');
const wd = load('webhook-dispatch.json');
const e2e = load('create-to-webhook.json');

const n = (x, d = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d).replace(/\.0+$/, '') : '–');
const ok = (cond) => (cond === undefined ? '–' : cond ? 'met' : '**not met**');
const rows = [];
if (av) {
  rows.push(['Slots engine, 31 days, 30-min grid, 500 busy + 1,000 Bookings: p50', `${n(av.engine_ms.p50_ms, 3)} ms`, '≤ 2 ms', '–', '–', ok(av.engine_ms.p50_ms <= 2)]);
  const g = av.http?.gateway;
  const base = av.http?.static_baseline;
  rows.push(['Slots through the gateway, 50 concurrent: p50', `${n(g?.p50_ms)} ms`, '≤ 10 ms', `${n(base?.p50_ms)} ms (bare Node HTTP, same ${av.http?.response_bytes} B body)`, `${n(g?.p50_ms / Math.max(base?.p50_ms, 1))}×`, ok(g?.p50_ms <= 10)]);
  rows.push(['Slots through the gateway, 50 concurrent: p99', `${n(g?.p99_ms)} ms`, '≤ 30 ms', `${n(base?.p99_ms)} ms`, `${n(g?.p99_ms / Math.max(base?.p99_ms, 1))}×`, ok(g?.p99_ms <= 30)]);
  rows.push(['Slots through the gateway, 50 concurrent: throughput', `${n(g?.requests_per_s, 0)} req/s`, '–', `${n(base?.requests_per_s, 0)} req/s`, `${n((100 * g?.requests_per_s) / base?.requests_per_s)} %`, '–']);
  if (g?.cpu_us_per_request) {
    const direct = av.http?.availability_direct;
    rows.push([
      'Slots: CPU per request (µs, from /proc)',
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
  rows.push(['Booking creates through the gateway, 32 clients, distinct slots', `${n(bk.http.bookings_per_s)} /s${batch}`, '≥ 40 % of pgbench', `${n(bk.pgbench.tps)} tps (pgbench, same SQL, one Booking per transaction)`, `${n(100 * bk.ratio_of_pgbench)} %`, ok(bk.ratio_of_pgbench >= 0.4)]);
  rows.push(['Booking creates: p50 / p99', `${n(bk.http.p50_ms)} / ${n(bk.http.p99_ms)} ms`, 'p99 ≤ 50 ms', `${n(bk.pgbench.p50_ms)} / ${n(bk.pgbench.p99_ms)} ms`, '–', ok(bk.http.p99_ms <= 50)]);
  if (bk.pgbench_batched) {
    const b = bk.pgbench_batched;
    rows.push([`… for reference: pgbench calling booking.create_bookings with ${b.batch_size} creates per call (the batched form's ceiling)`, '–', '–', `${n(b.bookings_per_s)} Bookings/s (${n(b.calls_per_s)} calls/s)`, `${n(100 * bk.ratio_of_pgbench_batched)} %`, '–']);
  }
  rows.push(['Booking creates straight to booking (no gateway hop)', `${n(bk.booking_direct.bookings_per_s)} /s, p99 ${n(bk.booking_direct.p99_ms)} ms`, '–', '–', '–', '–']);
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
      `${n(total)} ms (${Object.entries(cpu).map(([k, v]) => `${k} ${n(v)}`).join(', ')})`,
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
if (wd) rows.push([`Event on the bus → signed webhook received (webhook-dispatch alone), ${wd.rate_per_s}/s: p50 / p99`, `${n(wd.p50_ms)} / ${n(wd.p99_ms)} ms`, '–', '–', '–', '–']);
if (cs) {
  rows.push([`Calendar read, ${cs.calendar_events} events in Radicale: full / ctag probe (median)`, `${n(cs.full_read_ms_median)} / ${n(cs.ctag_probe_refresh_ms_median)} ms`, '–', '–', '–', '–']);
  rows.push(['Busy times from a warm snapshot: p50 / p99', `${n(cs.warm_snapshot_latency_ms_p50)} / ${n(cs.warm_snapshot_latency_ms_p99)} ms (${n(cs.warm_snapshot_rps, 0)} req/s)`, '–', '–', '–', '–']);
}

const md = `# Benchmarks

Produced by \`pnpm bench\` (scripts/bench.mjs), which runs every benchmark below in one run and writes
this page; raw figures are in \`.data/bench/*.json\`. Targets come from the issues; each baseline is
the physical limit of this machine for the same work, measured in the same run.

## Machine

| | |
|---|---|
| run | ${started.toISOString()} |
| OS / kernel | ${host.os} / ${host.kernel} |
| CPU | ${host.cpu} |
| memory | ${host.memory} |
| Node.js | ${host.node} |
| PostgreSQL | ${host.postgres} |
| RabbitMQ | ${host.rabbitmq} |
| load average at start | ${host.loadavg} |

## Figures

| figure | measured | target | baseline | ratio | verdict |
|---|---|---|---|---|---|
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

## How each is measured

- **Slots** (services/availability/bench/slots.bench.ts): the pure engine on inputs already resolved to
  instants, many iterations; then autocannon with 50 connections against the gateway (key auth, rate
  limit, forwarding) in front of availability, with calendar-sync stubbed by a static HTTP server
  serving the 500 busy intervals; the baseline is a bare Node HTTP server answering the same bytes.
- **Booking creates** (services/booking/bench/create.bench.ts): gateway and booking as processes,
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
- **Webhook dispatch alone** (services/webhook-dispatch/bench/dispatch.bench.ts) and **calendar reads**
  (services/calendar-sync/bench/busy.bench.ts) locate where time goes in the paths above.

Every figure depends on what else the two cores are doing: compare the load average above with 2.
`;
writeFileSync(join(root, 'docs', 'benchmarks.md'), md);
console.log(`bench: wrote docs/benchmarks.md (${rows.length} figures)`);
