/**
 * availability alone: CPU per Slots request answered from the cache (the second hop of a Slots
 * request, as the gateway sends it). Run: `node --import tsx services/availability/bench/slots-hop.bench.ts`
 * (Postgres and RabbitMQ running). One availability process (tsx) with the Slots locator's data
 * (fixture.ts: 31 dates, 30-minute grid, 500 calendar busy intervals from a static calendar-sync stub,
 * 1,000 Bookings; a 24.7 kB answer), then a fixed number of requests (BENCH_REQUESTS, default 30,000,
 * after BENCH_WARMUP, default 5,000) at 50 connections (autocannon), straight to availability with an
 * internal credential as the gateway's. Prints requests/s and the availability process's CPU (user +
 * system, from /proc) per request: on a shared machine that figure moves much less than the latencies.
 *
 * BENCH_TTL_MS sets SLOTS_CACHE_TTL_MS (default 600,000: every request of the run is a cache hit, so
 * the figure is the hop itself; 5000, the default of a deployment, adds the recomputations of the
 * expiries). BENCH_PIN=1 pins availability to CPU 1 and this process (the load generator) to CPU 0.
 * BENCH_PROFILE_DIR writes a CPU profile of the availability process there. BENCH_LOG_LEVEL (default
 * info, as `npm start` and the whole-system benches run) sets LOG_LEVEL. BENCH_BUILT=1 runs the
 * service's bundle (dist/main.js, `node scripts/build.mjs`) as the image and the whole-system benches
 * do, instead of its source through tsx.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { newId, toTimestamp } from '@sched/contracts';
import { cleanupAmqpPrefix, createTestDatabase, internalAuthorization, testAmqp, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { BENCH, makeFixture } from './fixture';
import { addDays, localDateOf } from '../src/domain/local-time';
import { freePort, listeningPort, ROOT, startChild, startService, waitReady, type Child } from './processes';

const CONNECTIONS = 50;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 30_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5_000);
const log = (msg: string) => process.stderr.write(`[bench slots-hop] ${msg}\n`);

/** CPU time (user, system) a process has used so far, in ms, from /proc. */
function cpuMs(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: (Number(fields[11]) * 1000) / 100, system: (Number(fields[12]) * 1000) / 100 };
}

async function call(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Record<string, string>> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as { data: Record<string, string> };
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function main(): Promise<void> {
  const from = addDays(localDateOf(BENCH.timezone, Date.now()), 1);
  const fx = makeFixture(from);
  const children: Child[] = [];
  const db = await createTestDatabase({ services: ['availability'] });
  const amqp = testAmqp();
  const scratch = path.join(tmpdir(), `slots-hop-bench-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  try {
    const busyFile = path.join(scratch, 'busy.json');
    const intervals = fx.busy.map((b) => ({ start_at: toTimestamp(new Date(b.start)), end_at: toTimestamp(new Date(b.end)) }));
    writeFileSync(busyFile, JSON.stringify({ data: { host_id: newId('hst'), snapshot_at: toTimestamp(new Date()), intervals }, meta: { request_id: 'req_bench' } }));
    const calendar = startChild(path.join(ROOT, 'services/availability/bench/static-server.ts'), [busyFile], {});
    children.push(calendar);
    const calendarUrl = `http://127.0.0.1:${await listeningPort(calendar)}`;

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const availability = startService(
      'availability',
      {
        HOST: '127.0.0.1',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        NODE_ENV: 'production',
        AMQP_URL: amqp.url,
        AMQP_PREFIX: amqp.prefix,
        INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
        PORT: String(port),
        DATABASE_URL: db.urlFor('availability'),
        CALENDAR_SYNC_URL: calendarUrl,
        CURSOR_SECRET: 'bench-cursor-secret-0123456789',
        SLOTS_CACHE_TTL_MS: process.env.BENCH_TTL_MS ?? '600000',
      },
      process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [],
    );
    children.push(availability);
    await waitReady(availability, url);

    // Seeded through availability's own admin API, as the gateway forwards it for the operator.
    const ws = newId('wsp');
    const admin = await internalAuthorization('availability', { principal: 'admin', workspaceId: ws });
    const base = `${url}/admin/v1/workspaces/${ws}`;
    const hostId = (await call(`${base}/hosts`, 'POST', admin, { name: 'Bench', email: 'bench@example.com', timezone: BENCH.timezone })).id!;
    await call(`${base}/hosts/${hostId}/schedule`, 'PUT', admin, fx.schedule);
    const evt = (await call(`${base}/event-types`, 'POST', admin, { host_id: hostId, name: 'Bench', slug: 'bench', duration_minutes: BENCH.durationMinutes, slot_interval_minutes: BENCH.gridMinutes, meeting_type: 'video' })).id!;
    await db.adminPool.query(`INSERT INTO availability.calendar_connections (host_id, workspace_id, status, event_at) VALUES ($1, $2, 'connected', now())`, [hostId, ws]);
    await db.adminPool.query(
      `INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
       SELECT b.id, $1, $2, $3, 1, 'confirmed', b.s, b.e, b.s, b.e FROM unnest($4::text[], $5::timestamptz[], $6::timestamptz[]) AS b(id, s, e)`,
      [ws, hostId, evt, fx.bookings.map(() => newId('bkg')), fx.bookings.map((b) => new Date(b.start)), fx.bookings.map((b) => new Date(b.end))],
    );

    // The headers the gateway forwards with (libs/http forward-client.ts), with one credential for the
    // whole run (the longest lifetime a verifier accepts) and its request id.
    const requestId = 'req_benchAAAAAAAAAAAAAAAAAAAA';
    const asGateway = {
      'user-agent': 'sched-internal',
      'x-request-id': requestId,
      ...(await internalAuthorization('availability', { principal: 'api_key', workspaceId: ws, apiKeyId: 'key_bench', scopes: ['slots:read'], requestId }, { ttlSeconds: 290 })),
    };
    const slots = `${url}/v1/event-types/${evt}/slots?from=${fx.from}&to=${fx.to}&timezone=${encodeURIComponent(BENCH.timezone)}`;
    const probe = await fetch(slots, { headers: asGateway });
    const probeBody = await probe.text();
    if (probe.status !== 200) throw new Error(`slots probe: ${probe.status} ${probeBody}`);
    const slotCount = (JSON.parse(probeBody) as { data: unknown[] }).data.length;
    log(`${slotCount} slots, ${Buffer.byteLength(probeBody)} bytes per answer`);

    const pid = availability.proc.pid!;
    if (process.env.BENCH_PIN) {
      execFileSync('taskset', ['-a', '-p', '-c', '1', String(pid)], { stdio: 'ignore' });
      execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    }
    log(`warming up: ${WARMUP} requests`);
    await autocannon({ url: slots, connections: CONNECTIONS, amount: WARMUP, headers: asGateway });
    log(`measuring: ${REQUESTS} requests`);
    const before = cpuMs(pid);
    const r = await autocannon({ url: slots, connections: CONNECTIONS, amount: REQUESTS, headers: asGateway });
    const after = cpuMs(pid);
    const total = Math.max(1, r.requests.total);
    const perRequest = (ms: number) => Math.round((ms * 1000 * 10) / total) / 10;
    process.stdout.write(
      `${JSON.stringify({
        benchmark: 'availability-slots-hop',
        connections: CONNECTIONS,
        requests: r.requests.total,
        answer_bytes: Buffer.byteLength(probeBody),
        requests_per_s: Math.round(r.requests.average),
        p50_ms: r.latency.p50,
        p99_ms: r.latency.p99,
        non_2xx_or_errors: r.non2xx + r.errors + r.timeouts,
        availability_cpu_us_per_request: perRequest(after.user - before.user + after.system - before.system),
        availability_system_cpu_us_per_request: perRequest(after.system - before.system),
      })}\n`,
    );
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(scratch, { recursive: true, force: true });
    await cleanupAmqpPrefix(amqp.url, amqp.prefix, ['availability', 'availability.dlq', 'availability.retry.1000ms', 'availability.retry.5000ms', 'availability.retry.30000ms'], ['scheduling.events', 'scheduling.dlx']).catch(() => undefined);
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
