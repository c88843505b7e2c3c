/**
 * Slots benchmark: a 31-day window, 30-minute grid, a host with 500 calendar busy intervals and 1,000
 * Bookings. Run: node --import tsx services/availability/bench/slots.bench.ts (Postgres and RabbitMQ
 * running). Prints progress on stderr and a JSON object of figures as the last line of stdout; writes
 * it to .data/bench/availability.json.
 *
 * 1. engine: the pure slot engine on inputs already resolved to instants (target p50 <= 2 ms), and the
 *    whole pure pipeline (schedule resolution + engine + formatting) for reference.
 * 2. http: autocannon at 50 connections against the gateway and availability running as processes
 *    (tsx), calendar-sync as a static stub process answering the 500 busy intervals; also with one
 *    connection (service time without queueing), straight to availability, and a bare Node server
 *    answering a static JSON of the same size (the physical-limit baseline). Under load, the CPU time
 *    (user + system, /proc) the gateway and availability processes spent per request is reported too
 *    (`cpu_us_per_request`): it moves much less than the latencies with what else runs on the machine.
 * BENCH_DURATION_S (default 10) sets each measurement's length; BENCH_PROFILE_DIR writes CPU profiles
 * of the availability process there (and of the gateway in its gateway/ subfolder).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { newId, toTimestamp } from '@sched/contracts';
import { cleanupAmqpPrefix, createTestDatabase, testAmqp, internalAuthorization, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { resolveAvailability } from '../src/domain/availability-resolver';
import { listSlots } from '../src/domain/find-slots';
import { addDays, localDateOf, startOfLocalDate } from '../src/domain/local-time';
import { findSlotStarts } from '../src/domain/slot-engine';
import { eventTypeView } from '../test/support/memory-sources';
import { BENCH, makeFixture, percentile, type Fixture } from './fixture';
import { freePort, listeningPort, ROOT, startChild, waitReady, type Child } from './processes';

const CONNECTIONS = 50;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123456789';
const log = (msg: string) => process.stderr.write(`[bench availability] ${msg}\n`);
const round = (n: number) => Math.round(n * 1000) / 1000;

function timeIt(iterations: number, fn: () => unknown): { p50_ms: number; p99_ms: number; mean_ms: number } {
  for (let i = 0; i < Math.min(200, iterations); i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { p50_ms: round(percentile(samples, 50)), p99_ms: round(percentile(samples, 99)), mean_ms: round(samples.reduce((a, b) => a + b, 0) / samples.length) };
}

async function engineFigures(fx: Fixture) {
  const now = Date.now();
  const tz = BENCH.timezone;
  const window = { start: startOfLocalDate(tz, fx.from), end: startOfLocalDate(tz, addDays(fx.to, 1)) };
  const availability = resolveAvailability(fx.schedule, tz, addDays(localDateOf(tz, window.start), -1), addDays(localDateOf(tz, window.end), 1));
  const busy = [...fx.bookings, ...fx.busy];
  const rules = { durationMs: 30 * 60_000, stepMs: 30 * 60_000, bufferBeforeMs: 0, bufferAfterMs: 0, minimumNoticeMs: 0, maximumAdvanceMs: 90 * 86_400_000 };
  const slots = findSlotStarts({ ...rules, availability, busy, now, window }).length;
  const engine = timeIt(5000, () => findSlotStarts({ ...rules, availability, busy, now, window }));

  const sources = {
    loadContext: async () => ({ eventType: eventTypeView({ maximumAdvanceMinutes: 129_600 }), hostTimezone: tz, schedule: fx.schedule }),
    bookedIntervals: async () => fx.bookings,
    calendarBusy: async () => fx.busy,
  };
  const samples: number[] = [];
  for (let i = 0; i < 1200; i++) {
    const t0 = process.hrtime.bigint();
    await listSlots(sources, 'wsp_x', 'evt_x', { from: fx.from, to: fx.to, timezone: 'America/New_York' }, new Date(now));
    if (i >= 200) samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { slots, engine, pipeline: { p50_ms: round(percentile(samples, 50)), p99_ms: round(percentile(samples, 99)) } };
}

/** CPU time a process has used so far in user and system (kernel) mode, in ms, from /proc (0 where there is none). */
function cpuMs(pid: number | undefined): { user: number; system: number } {
  if (!pid) return { user: 0, system: 0 };
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: (Number(fields[11]) * 1000) / 100, system: (Number(fields[12]) * 1000) / 100 };
  } catch {
    return { user: 0, system: 0 };
  }
}

/**
 * Latency and throughput under load, and the CPU time each of `processes` spent per request meanwhile:
 * on a shared machine the latencies move with what else runs, the CPU per request much less.
 */
async function load(url: string, headers: Record<string, string>, duration = DURATION_S, connections = CONNECTIONS, processes: Record<string, Child> = {}) {
  const before = Object.entries(processes).map(([name, child]) => [name, cpuMs(child.proc.pid)] as const);
  const result = await autocannon({ url, connections, duration, headers });
  const non2xx = result.non2xx + result.errors + result.timeouts;
  const requests = Math.max(1, result.requests.total);
  const spent = before.map(([name, ms]) => {
    const now = cpuMs(processes[name]!.proc.pid);
    return [name, { user: now.user - ms.user, system: now.system - ms.system }] as const;
  });
  const perRequest = (ms: number) => round((ms * 1000) / requests);
  return {
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    requests_per_s: Math.round(result.requests.average),
    non_2xx_or_errors: non2xx,
    ...(spent.length > 0
      ? {
          cpu_us_per_request: Object.fromEntries(spent.map(([name, ms]) => [name, perRequest(ms.user + ms.system)])),
          // The kernel's part of it (socket reads and writes, wake-ups): what the process's own code cannot shrink.
          system_cpu_us_per_request: Object.fromEntries(spent.map(([name, ms]) => [name, perRequest(ms.system)])),
        }
      : {}),
  };
}

async function call(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<Record<string, string>> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as { data: Record<string, string> };
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function httpFigures(fx: Fixture) {
  const children: Child[] = [];
  const db = await createTestDatabase({ services: ['gateway', 'availability'] });
  const amqp = testAmqp();
  const scratch = path.join(tmpdir(), `availability-bench-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  try {
    const busyFile = path.join(scratch, 'busy.json');
    const intervals = fx.busy.map((b) => ({ start_at: toTimestamp(new Date(b.start)), end_at: toTimestamp(new Date(b.end)) }));
    writeFileSync(busyFile, JSON.stringify({ data: { host_id: newId('hst'), snapshot_at: toTimestamp(new Date()), intervals }, meta: { request_id: 'req_bench' } }));
    const staticServer = path.join(ROOT, 'services/availability/bench/static-server.ts');
    const calendar = startChild(staticServer, [busyFile], {});
    children.push(calendar);
    const calendarUrl = `http://127.0.0.1:${await listeningPort(calendar)}`;

    const [availabilityPort, gatewayPort, gatewayOpsPort] = [await freePort(), await freePort(), await freePort()];
    const availabilityUrl = `http://127.0.0.1:${availabilityPort}`;
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const common = { HOST: '127.0.0.1', LOG_LEVEL: 'error', NODE_ENV: 'production', AMQP_URL: amqp.url, AMQP_PREFIX: amqp.prefix, INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS };
    const availability = startChild(path.join(ROOT, 'services/availability/src/main.ts'), [], {
      ...common,
      PORT: String(availabilityPort),
      DATABASE_URL: db.urlFor('availability'),
      CALENDAR_SYNC_URL: calendarUrl,
      CURSOR_SECRET: 'bench-cursor-secret-0123456789',
    }, process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []);
    children.push(availability);
    const gateway = startChild(path.join(ROOT, 'services/gateway/src/main.ts'), [], {
      ...common,
      PORT: String(gatewayPort),
      // The gateway answers /readyz on its operations port only.
      OPS_PORT: String(gatewayOpsPort),
      DATABASE_URL: db.urlFor('gateway'),
      ADMIN_TOKEN,
      AVAILABILITY_URL: availabilityUrl,
      BOOKING_URL: availabilityUrl,
      INVITATION_URL: availabilityUrl,
      CALENDAR_SYNC_URL: calendarUrl,
      WEBHOOK_DISPATCH_URL: availabilityUrl,
    }, process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.join(process.env.BENCH_PROFILE_DIR, 'gateway')}`] : []);
    children.push(gateway);
    await Promise.all([waitReady(availability, availabilityUrl), waitReady(gateway, `http://127.0.0.1:${gatewayOpsPort}`)]);
    log('services ready; seeding');

    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const ws = (await call(`${gatewayUrl}/admin/v1/workspaces`, 'POST', { name: 'Bench' }, admin)).id!;
    const key = (await call(`${gatewayUrl}/admin/v1/workspaces/${ws}/api-keys`, 'POST', { name: 'bench', scopes: ['slots:read', 'event_types:read'], rate_limit: { limit: 100000, window_seconds: 1 } }, admin)).key!;
    const hostId = (await call(`${gatewayUrl}/admin/v1/workspaces/${ws}/hosts`, 'POST', { name: 'Bench', email: 'bench@example.com', timezone: BENCH.timezone }, admin)).id!;
    await call(`${gatewayUrl}/admin/v1/workspaces/${ws}/hosts/${hostId}/schedule`, 'PUT', fx.schedule, admin);
    const evt = (await call(`${gatewayUrl}/admin/v1/workspaces/${ws}/event-types`, 'POST', { host_id: hostId, name: 'Bench', slug: 'bench', duration_minutes: BENCH.durationMinutes, slot_interval_minutes: BENCH.gridMinutes, meeting_type: 'video' }, admin)).id!;
    // Projections are seeded directly: the event path that fills them has its own integration tests.
    await db.adminPool.query(`INSERT INTO availability.calendar_connections (host_id, workspace_id, status, event_at) VALUES ($1, $2, 'connected', now())`, [hostId, ws]);
    await db.adminPool.query(
      `INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
       SELECT b.id, $1, $2, $3, 1, 'confirmed', b.s, b.e, b.s, b.e FROM unnest($4::text[], $5::timestamptz[], $6::timestamptz[]) AS b(id, s, e)`,
      [ws, hostId, evt, fx.bookings.map(() => newId('bkg')), fx.bookings.map((b) => new Date(b.start)), fx.bookings.map((b) => new Date(b.end))],
    );

    const slotsPath = `/v1/event-types/${evt}/slots?from=${fx.from}&to=${fx.to}&timezone=${encodeURIComponent(BENCH.timezone)}`;
    const probe = await fetch(`${gatewayUrl}${slotsPath}`, { headers: { authorization: `Bearer ${key}` } });
    const probeBody = await probe.text();
    if (probe.status !== 200) throw new Error(`slots probe: ${probe.status} ${probeBody}`);
    const slotCount = (JSON.parse(probeBody) as { data: unknown[] }).data.length;
    const staticFile = path.join(scratch, 'slots.json');
    writeFileSync(staticFile, probeBody);
    const baseline = startChild(staticServer, [staticFile], {});
    children.push(baseline);
    const baselineUrl = `http://127.0.0.1:${await listeningPort(baseline)}`;
    log(`${slotCount} slots, ${probeBody.length} bytes per answer; warming up`);

    await load(`${gatewayUrl}${slotsPath}`, { authorization: `Bearer ${key}` }, 3);
    log('measuring through the gateway');
    const viaGateway = await load(`${gatewayUrl}${slotsPath}`, { authorization: `Bearer ${key}` }, DURATION_S, CONNECTIONS, { gateway, availability });
    log('measuring one connection at a time through the gateway (service time without queueing)');
    const oneConnection = await load(`${gatewayUrl}${slotsPath}`, { authorization: `Bearer ${key}` }, Math.min(DURATION_S, 5), 1);
    log('measuring availability directly');
    // As the gateway forwards it: one credential for the whole run (the longest lifetime a verifier accepts).
    const asGateway = await internalAuthorization('availability', { principal: 'api_key', workspaceId: ws, apiKeyId: 'key_bench', scopes: ['slots:read'] }, { ttlSeconds: 290 });
    const direct = await load(`${availabilityUrl}${slotsPath}`, asGateway, DURATION_S, CONNECTIONS, { availability });
    log('measuring the static baseline');
    await load(baselineUrl, {}, 2);
    const bare = await load(baselineUrl, {});
    return { slots: slotCount, response_bytes: probeBody.length, gateway: viaGateway, gateway_1_connection: oneConnection, availability_direct: direct, static_baseline: bare };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(scratch, { recursive: true, force: true });
    await cleanupAmqpPrefix(amqp.url, amqp.prefix, ['availability', 'availability.dlq', 'availability.retry.1000ms', 'availability.retry.5000ms', 'availability.retry.30000ms'], ['scheduling.events', 'scheduling.dlx']).catch(() => undefined);
    await db.drop();
  }
}

async function main(): Promise<void> {
  const loadBefore = loadavg().map(round);
  const from = addDays(localDateOf(BENCH.timezone, Date.now()), 1);
  const fx = makeFixture(from);
  log('engine');
  const engine = await engineFigures(fx);
  log(`engine p50 ${engine.engine.p50_ms} ms; starting processes`);
  const http = await httpFigures(fx);
  const figures = {
    benchmark: 'availability-slots',
    // Shared machines: the load average says how much else competed for the CPUs meanwhile.
    machine: { cpus: cpus().length, loadavg_before: loadBefore, loadavg_after: loadavg().map(round) },
    scenario: { dates: BENCH.dates, grid_minutes: BENCH.gridMinutes, busy_intervals: BENCH.busy, bookings: BENCH.bookings, connections: CONNECTIONS, duration_s: DURATION_S },
    engine_ms: engine.engine,
    pure_pipeline_ms: engine.pipeline,
    http,
    targets: { engine_p50_ms: 2, gateway_p50_ms: 10, gateway_p99_ms: 30 },
    met: { engine_p50: engine.engine.p50_ms <= 2, gateway_p50: http.gateway.p50_ms <= 10, gateway_p99: http.gateway.p99_ms <= 30 },
  };
  const out = path.join(ROOT, '.data/bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'availability.json'), `${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
