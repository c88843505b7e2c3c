/**
 * What the booking benches share (create.bench.ts, share.bench.ts, api-create.bench.ts): the create they
 * send and the credential the gateway would send with it, booking's bundle as a child process with its log
 * lines counted, a process's CPU time and system calls from /proc, the bench's AMQP clean-up and its entry
 * point. The load generator is http-load.ts; pgbench's side is pgbench-booking.ts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { cleanupAmqpPrefix, internalAuthorization, waitFor, TEST_INTERNAL_AUTH_KEYS, type TestAmqp, type TestDatabase } from '@sched/testing';

export const ROOT = path.resolve(__dirname, '../../..');

/** The body of the i-th create: one Event Type and guest, each i its own hour from 2035-01-01 (a new slot). */
export function createBody(i: number): string {
  return JSON.stringify({
    event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    start_at: new Date(Date.UTC(2035, 0, 1) + i * 3_600_000).toISOString(),
    guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
    metadata: { order: `o-${i}`, channel: 'bench' },
  });
}

/**
 * Straight to booking: the credential the gateway would send for this API key (bookings:write and
 * bookings:read), minted once for a run shorter than its lifetime (240 s).
 */
export function gatewayCredential(workspaceId: string, apiKeyId: string): Promise<{ authorization: string }> {
  return internalAuthorization('booking', { principal: 'api_key', workspaceId, apiKeyId, scopes: ['bookings:write', 'bookings:read'] }, { ttlSeconds: 240 });
}

/** CPU time (user + system, ms) process `pid` has used so far, from /proc/<pid>/stat (Linux; throws once it has gone). */
export function procCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

/** Read and write system calls process `pid` has made so far, from /proc/<pid>/io. */
export function procIo(pid: number): { syscr: number; syscw: number } {
  const io = Object.fromEntries(
    readFileSync(`/proc/${pid}/io`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(': ') as [string, string]),
  );
  return { syscr: Number(io.syscr), syscw: Number(io.syscw) };
}

/** `node scripts/build.mjs`: the esbuild bundles the benches run. */
export function buildBundles(log: (msg: string) => void): void {
  log('building the bundles');
  const built = spawnSync('node', ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`build failed:\n${built.stderr}`);
}

export interface BookingProcess {
  proc: ChildProcess;
  url: string;
  /** The bundle it runs. */
  bundle: string;
  /** Lines it has written so far, stdout and stderr. */
  lines(): number;
  /** SIGTERM, resolved when it has exited. */
  stop(): Promise<void>;
}

/**
 * Booking's esbuild bundle (BENCH_BUNDLE, default services/booking/dist/main.js) as a child process on a
 * free port, LOG_LEVEL info, on `db` and `bus`, asking `availabilityUrl` about slots; `env` adds to or
 * overrides that (NODE_ENV, PROCESS_ROLE), `nodeArgs` go before the bundle. BENCH_PROFILE_DIR: it writes a
 * CPU profile into <dir>/booking/ when it exits. Resolves once /readyz answers 200.
 */
export async function startBookingBundle(opts: { port: number; db: TestDatabase; bus: TestAmqp; availabilityUrl: string; env: Record<string, string>; nodeArgs?: string[] }): Promise<BookingProcess> {
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.join(process.env.BENCH_PROFILE_DIR, 'booking')}`] : [];
  const bundle = process.env.BENCH_BUNDLE ?? path.join(ROOT, 'services/booking/dist/main.js');
  const proc = spawn(process.execPath, [...profile, ...(opts.nodeArgs ?? []), bundle], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(opts.port),
      DATABASE_URL: opts.db.urlFor('booking'),
      AMQP_URL: opts.bus.url,
      AMQP_PREFIX: opts.bus.prefix,
      AVAILABILITY_URL: opts.availabilityUrl,
      CURSOR_SECRET: 'bench-cursor-secret-0123456789',
      INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let lines = 0;
  for (const stream of [proc.stdout!, proc.stderr!]) createInterface({ input: stream }).on('line', () => (lines += 1));
  const exited = new Promise((r) => proc.once('exit', r));
  const url = `http://127.0.0.1:${opts.port}`;
  const stop = async () => {
    proc.kill('SIGTERM');
    await exited;
  };
  try {
    await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => null))?.ok ?? false, { timeoutMs: 30_000, intervalMs: 100 });
  } catch (err) {
    await stop();
    throw err;
  }
  return { proc, url, bundle, lines: () => lines, stop };
}

/** Deletes the queues and exchanges booking declared under the bench's AMQP prefix; a failure is ignored. */
export async function cleanupBookingBus(bus: TestAmqp): Promise<void> {
  await cleanupAmqpPrefix(bus.url, bus.prefix, ['booking', 'booking.dlq', 'booking.retry.1000ms', 'booking.retry.5000ms', 'booking.retry.30000ms'], [
    'scheduling.events',
    'scheduling.dlx',
  ]).catch(() => undefined);
}

/** Runs a bench's `main`: exit 0 when it resolves, its stack on stderr and exit 1 when it throws. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
