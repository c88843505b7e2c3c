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
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { createTestDatabase, freePort, testAmqp } from '@sched/testing';
import { bookable, startAvailabilityStub } from '../test/support/availability-stub';
import { buildBundles, cleanupBookingBus, createBody, gatewayCredential, procCpuMs, procIo, runMain, startBookingBundle, type BookingProcess } from './booking-bench';

const CLIENTS = 32;
const CREATES = Number(process.env.BENCH_CREATES ?? 6000);
const WARMUP = 1500;
const SLOT_DELAY_MS = Number(process.env.BENCH_SLOT_DELAY_MS ?? 5);

const log = (msg: string) => process.stderr.write(`[bench api-create] ${msg}\n`);
const id = (prefix: string) => `${prefix}_${randomBytes(16).toString('base64url')}`;

function counters(pid: number) {
  return { cpuMs: procCpuMs(pid), ...procIo(pid) };
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
  if (!process.env.BENCH_NO_BUILD && !process.env.BENCH_BUNDLE) buildBundles(log);
  const db = await createTestDatabase({ services: ['booking'] });
  const bus = testAmqp();
  const stub = await startAvailabilityStub((call) => ({ ...bookable()(call), delayMs: SLOT_DELAY_MS }));
  let booking: BookingProcess | undefined;
  try {
    const port = await freePort();
    booking = await startBookingBundle({ port, db, bus, availabilityUrl: stub.url, env: { NODE_ENV: 'test', PROCESS_ROLE: 'api' }, nodeArgs: ['--enable-source-maps'] });
    const { proc, bundle } = booking;
    const auth = await gatewayCredential(id('wsp'), id('key'));
    let i = 0;
    const next = () => {
      i += 1;
      return { body: createBody(i), headers: { ...auth, 'idempotency-key': `api-${i}` } };
    };
    log(`warm-up: ${WARMUP} creates`);
    await closedLoop(port, WARMUP, next);
    const calls = stub.requests.length;
    const a = counters(proc.pid!);
    const linesBefore = booking.lines();
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
        log_lines: per(booking.lines() - linesBefore, 2),
        slot_check_calls: per(stub.requests.length - calls, 2),
        mean_create_batch: Math.round((rows[0]!.n / rows[0]!.tx) * 10) / 10,
      })}\n`,
    );
  } finally {
    await booking?.stop();
    await stub.close();
    await db.drop();
    await cleanupBookingBus(bus);
  }
}

runMain(main);
