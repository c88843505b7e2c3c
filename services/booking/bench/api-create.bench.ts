/**
 * Booking's API process alone, per create (issue 18), for before/after comparisons of the create path on a
 * shared machine. Not part of `pnpm bench`.
 * Run: `node --import tsx services/booking/bench/api-create.bench.ts` (BENCH_CREATES, default 6000;
 * BENCH_SLOT_DELAY_MS, default 5; BENCH_PROFILE_DIR for a CPU profile; BENCH_NO_BUILD=1 to reuse the bundle;
 * BENCH_BUNDLE=<path> runs another build of booking's bundle, e.g. a copy of services/booking/dist/main.js
 * from before a change, for A B A B comparisons). Prints one JSON object on its last line.
 *
 * Booking runs as the system harness runs its API process (the esbuild bundle, PROCESS_ROLE api, NODE_ENV
 * test, LOG_LEVEL info), on its own database and AMQP prefix; availability is an in-process stub answering
 * "bookable" after BENCH_SLOT_DELAY_MS. 32 closed-loop clients send creates straight to booking with the
 * credential the gateway would send, each a new slot with its own Idempotency-Key, until BENCH_CREATES are
 * answered. Per create: the API process's CPU (user + system, /proc), its read and write system calls, log
 * lines, slot-check calls and the mean group-commit batch.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { cleanupAmqpPrefix, createTestDatabase, freePort, internalAuthorization, testAmqp, waitFor, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { bookable, startAvailabilityStub } from '../test/support/availability-stub';

const ROOT = path.resolve(__dirname, '../../..');
const CLIENTS = 32;
const CREATES = Number(process.env.BENCH_CREATES ?? 6000);
const WARMUP = 1500;
const SLOT_DELAY_MS = Number(process.env.BENCH_SLOT_DELAY_MS ?? 5);

const log = (msg: string) => process.stderr.write(`[bench api-create] ${msg}\n`);
const id = (prefix: string) => `${prefix}_${randomBytes(16).toString('base64url')}`;

function counters(pid: number) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const num = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(io)![1]);
  return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, syscr: num('syscr'), syscw: num('syscw') };
}

/** `count` creates from CLIENTS closed-loop clients on keep-alive sockets; answers by status. */
async function closedLoop(port: number, count: number, next: () => { body: string; headers: Record<string, string> }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const statuses: Record<string, number> = {};
  let sent = 0;
  const once = () =>
    new Promise<void>((resolve) => {
      const { body, headers } = next();
      const req = http.request(
        { host: '127.0.0.1', port, path: '/v1/bookings', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } },
        (res) => {
          res.resume();
          res.on('end', () => {
            statuses[res.statusCode!] = (statuses[res.statusCode!] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        statuses.error = (statuses.error ?? 0) + 1;
        resolve();
      });
      req.end(body);
    });
  const worker = async () => {
    while (sent < count) {
      sent += 1;
      await once();
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CLIENTS }, worker));
  agent.destroy();
  return { statuses, seconds: (Date.now() - started) / 1000 };
}

async function main(): Promise<void> {
  if (!process.env.BENCH_NO_BUILD && !process.env.BENCH_BUNDLE) {
    log('building the bundles');
    const built = spawnSync('node', ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`build failed:\n${built.stderr}`);
  }
  const db = await createTestDatabase({ services: ['booking'] });
  const bus = testAmqp();
  const stub = await startAvailabilityStub((call) => ({ ...bookable()(call), delayMs: SLOT_DELAY_MS }));
  const port = await freePort();
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.join(process.env.BENCH_PROFILE_DIR, 'booking')}`] : [];
  const bundle = process.env.BENCH_BUNDLE ?? path.join(ROOT, 'services/booking/dist/main.js');
  const proc = spawn(process.execPath, [...profile, '--enable-source-maps', bundle], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      PROCESS_ROLE: 'api',
      DATABASE_URL: db.urlFor('booking'),
      AMQP_URL: bus.url,
      AMQP_PREFIX: bus.prefix,
      AVAILABILITY_URL: stub.url,
      CURSOR_SECRET: 'bench-cursor-secret-0123456789',
      INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let lines = 0;
  for (const stream of [proc.stdout!, proc.stderr!]) createInterface({ input: stream }).on('line', () => (lines += 1));
  const exited = new Promise((r) => proc.once('exit', r));
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok ?? false, { timeoutMs: 30_000, intervalMs: 100 });
    const auth = await internalAuthorization('booking', { principal: 'api_key', workspaceId: id('wsp'), apiKeyId: id('key'), scopes: ['bookings:write', 'bookings:read'] }, { ttlSeconds: 240 });
    let i = 0;
    const next = () => {
      i += 1;
      const body = JSON.stringify({
        event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
        start_at: new Date(Date.UTC(2035, 0, 1) + i * 3_600_000).toISOString(),
        guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
        metadata: { order: `o-${i}`, channel: 'bench' },
      });
      return { body, headers: { ...auth, 'idempotency-key': `api-${i}` } };
    };
    log(`warm-up: ${WARMUP} creates`);
    await closedLoop(port, WARMUP, next);
    const calls = stub.requests.length;
    const a = counters(proc.pid!);
    const linesBefore = lines;
    log(`${CREATES} creates, ${CLIENTS} clients, slot checks answered after ${SLOT_DELAY_MS} ms`);
    const run = await closedLoop(port, CREATES, next);
    const b = counters(proc.pid!);
    const { rows } = await db.adminPool.query<{ n: number; tx: number }>('SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS tx FROM booking.bookings');
    const per = (v: number, digits = 3) => Math.round((v / CREATES) * 10 ** digits) / 10 ** digits;
    process.stdout.write(
      `${JSON.stringify({
        name: 'booking-api-create',
        bundle,
        creates: CREATES,
        statuses: run.statuses,
        per_s: Math.round((CREATES / run.seconds) * 10) / 10,
        booking_cpu_us: Math.round(per(b.cpuMs - a.cpuMs) * 1000),
        syscalls_read: per(b.syscr - a.syscr, 2),
        syscalls_write: per(b.syscw - a.syscw, 2),
        log_lines: per(lines - linesBefore, 2),
        slot_check_calls: per(stub.requests.length - calls, 2),
        mean_create_batch: Math.round((rows[0]!.n / rows[0]!.tx) * 10) / 10,
      })}\n`,
    );
  } finally {
    proc.kill('SIGTERM');
    await exited;
    await stub.close();
    await db.drop();
    await cleanupAmqpPrefix(bus.url, bus.prefix, ['booking', 'booking.dlq', 'booking.retry.1000ms', 'booking.retry.5000ms', 'booking.retry.30000ms'], [
      'scheduling.events',
      'scheduling.dlx',
    ]).catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
