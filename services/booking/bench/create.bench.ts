/**
 * Booking create throughput through the gateway, next to what Postgres alone can do with the same
 * transaction on this machine. Run: `node --import tsx services/booking/bench/create.bench.ts`
 * (BENCH_DURATION_S, default 15; BENCH_PROFILE_DIR for CPU profiles). Prints a JSON object on the last line, writes .data/bench/booking.json.
 *
 * HTTP run: gateway and booking as real processes (as deployed), availability as an in-process stub that
 * says "bookable" with a distinct range per start, 32 closed-loop clients, each request a new slot with its
 * own Idempotency-Key. pgbench run (the baseline): 32 clients for the same duration running the statements of
 * one idempotent create, one Booking per transaction (see pgbench-booking.ts), against a scratch database.
 * The service group-commits creates (docs/booking.md), so a second pgbench run, for reference, calls
 * booking.create_bookings with the HTTP run's mean batch size: the ceiling of the batched form.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestDatabase, freePort, testAmqp, waitFor, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { bookable, startAvailabilityStub } from '../test/support/availability-stub';
import { cleanupBookingBus, createBody, gatewayCredential, procCpuMs, ROOT, runMain } from './booking-bench';
import { runClosedLoop, percentile } from './http-load';
import { runPgbench, type PgbenchScript } from './pgbench-booking';

const CLIENTS = 32;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 15);
const WARMUP_S = 3;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123456789';
const TARGET = { ratioOfPgbench: 0.4, p99Ms: 50 };

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

/** BENCH_PROFILE_DIR: each process writes a CPU profile into <dir>/<service>/ when it exits. */
function profileArgs(entry: string): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, entry.split('/')[1] ?? 'process')}`] : [];
}

async function startProcess(entry: string, port: number, env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [...profileArgs(entry), '--import', 'tsx', entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(
    async () => {
      if (proc.exitCode !== null) throw new Error(`${entry} exited with ${proc.exitCode}`);
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return proc;
}

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const done = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await done;
}

/** CPU time (user + system, ms) a child process has used so far, from /proc (Linux). */
function cpuMs(proc: ChildProcess): number {
  try {
    return procCpuMs(proc.pid!);
  } catch {
    return NaN;
  }
}

async function admin(gatewayUrl: string, pathName: string, body: unknown): Promise<{ id: string; key?: string }> {
  const res = await fetch(`${gatewayUrl}${pathName}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`${pathName}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { id: string; key?: string } }).data;
}

async function httpRun() {
  const db = await createTestDatabase({ services: ['gateway', 'booking'] });
  const amqp = testAmqp();
  const stub = await startAvailabilityStub(bookable());
  const [bookingPort, gatewayPort] = [await freePort(), await freePort()];
  const procs: ChildProcess[] = [];
  try {
    procs.push(
      await startProcess('services/booking/src/main.ts', bookingPort, {
        DATABASE_URL: db.urlFor('booking'),
        AMQP_URL: amqp.url,
        AMQP_PREFIX: amqp.prefix,
        AVAILABILITY_URL: stub.url,
        CURSOR_SECRET: 'bench-cursor-secret-0123456789',
        INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
      }),
    );
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    procs.push(
      await startProcess('services/gateway/src/main.ts', gatewayPort, {
        DATABASE_URL: db.urlFor('gateway'),
        ADMIN_TOKEN,
        INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
        BOOKING_URL: `http://127.0.0.1:${bookingPort}`,
        AVAILABILITY_URL: stub.url,
      }),
    );
    const [bookingProc, gatewayProc] = procs as [ChildProcess, ChildProcess];
    const ws = await admin(gatewayUrl, '/admin/v1/workspaces', { name: 'Bench' });
    const key = await admin(gatewayUrl, `/admin/v1/workspaces/${ws.id}/api-keys`, {
      name: 'bench',
      scopes: ['bookings:write', 'bookings:read'],
      rate_limit: { limit: 100000, window_seconds: 1 },
    });

    // Straight to booking (the credential the gateway would send for this key), to see the booking service alone.
    const internal = await gatewayCredential(ws.id, key.id);
    let i = 0;
    const next = (direct = false) => {
      i += 1;
      const body = createBody(i);
      const auth: Record<string, string> = direct ? internal : { authorization: `Bearer ${key.key}` };
      return { path: '/v1/bookings', body, headers: { ...auth, 'idempotency-key': `bench-${i}` } };
    };
    log(`warm-up ${WARMUP_S}s`);
    await runClosedLoop({ url: gatewayUrl, clients: CLIENTS, durationS: WARMUP_S, expectStatus: 201, next: () => next() });
    log(`HTTP run through the gateway ${DURATION_S}s at ${CLIENTS} clients`);
    const before = { booking: cpuMs(bookingProc), gateway: cpuMs(gatewayProc) };
    const result = await runClosedLoop({ url: gatewayUrl, clients: CLIENTS, durationS: DURATION_S, expectStatus: 201, next: () => next() });
    const cpu = {
      booking_ms_per_request: Math.round(((cpuMs(bookingProc) - before.booking) / result.ok) * 100) / 100,
      gateway_ms_per_request: Math.round(((cpuMs(gatewayProc) - before.gateway) / result.ok) * 100) / 100,
    };
    // Every row of one batch carries its transaction's id: rows per transaction is the mean batch size.
    const counted = (await db.adminPool.query('SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS transactions FROM booking.bookings')).rows[0] as { n: number; transactions: number };
    const stored = counted.n;
    const meanBatch = counted.n / Math.max(1, counted.transactions);
    log(`HTTP run straight to the booking service ${DURATION_S}s at ${CLIENTS} clients (for comparison)`);
    const direct = await runClosedLoop({ url: `http://127.0.0.1:${bookingPort}`, clients: CLIENTS, durationS: DURATION_S, expectStatus: 201, next: () => next(true) });
    const samples = {
      outboxPayload: JSON.stringify((await db.adminPool.query('SELECT payload FROM booking.outbox LIMIT 1')).rows[0].payload),
      storedResponse: (await db.adminPool.query('SELECT response_body FROM booking.idempotency_keys LIMIT 1')).rows[0].response_body as string,
      metadata: JSON.stringify({ order: 'o-1', channel: 'bench' }),
    };
    return { result, stored, meanBatch, samples, cpu, direct };
  } finally {
    for (const p of procs.reverse()) await stopProcess(p);
    await stub.close();
    await db.drop();
    await cleanupBookingBus(amqp);
  }
}

async function pgbenchRun(samples: { outboxPayload: string; storedResponse: string; metadata: string }, script: PgbenchScript) {
  const db = await createTestDatabase({ services: ['booking'] });
  try {
    log(`pgbench ${DURATION_S}s at ${CLIENTS} clients, ${script.kind === 'statements' ? 'one create per transaction' : `booking.create_bookings with ${script.batchSize} creates per call`}`);
    return await runPgbench({ adminUrl: db.adminUrl, clients: CLIENTS, durationS: DURATION_S, samples, script });
  } finally {
    await db.drop();
  }
}

async function main(): Promise<void> {
  const { result, stored, meanBatch, samples, cpu, direct } = await httpRun();
  // The baseline of the issue: the create's SQL, one Booking per transaction (what Postgres alone sustains).
  const pg = await pgbenchRun(samples, { kind: 'statements' });
  // For reference: the group-committed form at the batch size the HTTP run had (its own ceiling).
  const batchSize = Math.max(1, Math.round(meanBatch));
  const batched = await pgbenchRun(samples, { kind: 'function', batchSize });
  const bookingsPerS = result.ok / result.durationS;
  const p99 = percentile(result.latenciesMs, 99);
  const figures = {
    name: 'booking-create',
    clients: CLIENTS,
    duration_s: DURATION_S,
    http: {
      bookings_per_s: Math.round(bookingsPerS * 10) / 10,
      p50_ms: Math.round(percentile(result.latenciesMs, 50) * 100) / 100,
      p99_ms: Math.round(p99 * 100) / 100,
      created: result.ok,
      other_statuses: result.otherStatuses,
      transport_errors: result.errors,
      rows_in_database: stored,
      mean_batch: Math.round(meanBatch * 10) / 10,
      cpu,
    },
    booking_direct: {
      bookings_per_s: Math.round((direct.ok / direct.durationS) * 10) / 10,
      p50_ms: Math.round(percentile(direct.latenciesMs, 50) * 100) / 100,
      p99_ms: Math.round(percentile(direct.latenciesMs, 99) * 100) / 100,
      other_statuses: direct.otherStatuses,
      transport_errors: direct.errors,
    },
    pgbench: { tps: Math.round(pg.tps * 10) / 10, p50_ms: Math.round(pg.p50Ms * 100) / 100, p99_ms: Math.round(pg.p99Ms * 100) / 100, transactions: pg.transactions, failed: pg.failed },
    pgbench_batched: {
      batch_size: batchSize,
      calls_per_s: Math.round(batched.tps * 10) / 10,
      bookings_per_s: Math.round(batched.tps * batchSize * 10) / 10,
      p99_ms: Math.round(batched.p99Ms * 100) / 100,
      failed: batched.failed,
    },
    ratio_of_pgbench: Math.round((bookingsPerS / pg.tps) * 1000) / 1000,
    ratio_of_pgbench_batched: Math.round((bookingsPerS / (batched.tps * batchSize)) * 1000) / 1000,
    targets: { ratio_of_pgbench_min: TARGET.ratioOfPgbench, p99_ms_max: TARGET.p99Ms },
    meets_targets: { ratio: bookingsPerS / pg.tps >= TARGET.ratioOfPgbench, p99: p99 <= TARGET.p99Ms },
  };
  const dir = path.join(ROOT, '.data', 'bench');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'booking.json'), `${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

runMain(main);
