// CPU per booking of calendar-sync and Radicale, as in the create path: for each booking one busy query
// (availability's slot check) and one booking.created to write, at 50 bookings/s, on one host whose
// calendar already has EVENTS events. calendar-sync runs as its own process (src/main.ts under tsx, or
// SERVICE_ENTRY; node flags in SERVICE_NODE_ARGS, e.g. --cpu-prof), so its CPU is measured apart from this
// load generator's.
// Run: node --import tsx services/calendar-sync/bench/per-booking.bench.ts
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { toTimestamp } from '@sched/contracts';
import { createTestDatabase, freePort, makeBooking, startRadicale, testAmqp, waitFor, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import {
  at,
  call,
  cleanupBroker,
  SECRETS_KEY,
  startAvailabilityStub,
  startPublisher,
} from '../test/support/harness';
import { seedConnectedCalendar } from './seeded-calendar';

const BOOKINGS = Number(process.env.BOOKINGS ?? 300);
const EVENTS = Number(process.env.EVENTS ?? 200);
const RATE_PER_S = 50;

function cpuMsOfPort(port: number): number {
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`]).toString();
  const pid = /pid=(\d+)/.exec(out)?.[1];
  return pid ? cpuMsOfPid(Number(pid)) : NaN;
}

function cpuMsOfPid(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, clock ticks of 10 ms
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ services: ['calendar-sync'] });
  const radicale = await startRadicale({ users: { alice: 'bench-password' } });
  const availability = await startAvailabilityStub();
  const amqp = testAmqp();
  const port = await freePort();
  const child = spawn(process.execPath, [...(process.env.SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', process.env.SERVICE_ENTRY ?? join(__dirname, '../src/main.ts')], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: db.urlFor('calendar-sync'),
      AMQP_URL: amqp.url,
      AMQP_PREFIX: amqp.prefix,
      AVAILABILITY_URL: availability.url,
      SECRETS_KEY,
      INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const svc = { url: `http://127.0.0.1:${port}` };
  await waitFor(async () => (await fetch(`${svc.url}/readyz`).catch(() => undefined))?.ok, { timeoutMs: 30_000 });
  const publisher = await startPublisher(amqp);
  try {
    const { ws, hostId, busyPath: path } = await seedConnectedCalendar({ svcUrl: svc.url, radicale, availability, user: 'alice', password: 'bench-password', events: EVENTS });
    await call(svc.url, 'GET', path); // the snapshot exists, as in steady state

    const cpu0 = cpuMsOfPid(child.pid!);
    const rad0 = cpuMsOfPort(radicale.port);
    const t0 = Date.now();
    const busy: Promise<unknown>[] = [];
    for (let i = 0; i < BOOKINGS; i++) {
      busy.push(call(svc.url, 'GET', path).then((r) => {
        if (r.status !== 200) throw new Error(`busy answered ${r.status}`);
      }));
      await publisher.publish('booking.created', ws, makeBooking({ host_id: hostId, start_at: toTimestamp(at(2 + (i % 60), 7, i % 60)), meeting: { type: 'phone', join_url: null } }));
      const due = t0 + ((i + 1) * 1000) / RATE_PER_S;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    }
    await Promise.all(busy);
    const synced = async () => Number((await db.adminPool.query(`SELECT count(*) FROM calendar_sync.booking_syncs WHERE status = 'synced'`)).rows[0].count);
    const writtenAtEnd = await synced();
    await waitFor(async () => (await synced()) === BOOKINGS, { timeoutMs: 120_000, intervalMs: 100 });
    const elapsedMs = Date.now() - t0;
    const cpu = cpuMsOfPid(child.pid!) - cpu0;
    const rad = cpuMsOfPort(radicale.port) - rad0;
    const figures = {
      bench: 'calendar-sync-per-booking',
      bookings: BOOKINGS,
      rate_per_s: RATE_PER_S,
      written_when_last_published: writtenAtEnd,
      all_written_after_ms: elapsedMs,
      calendar_sync_cpu_ms_per_booking: Math.round((cpu / BOOKINGS) * 100) / 100,
      radicale_cpu_ms_per_booking: Math.round((rad / BOOKINGS) * 100) / 100,
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await publisher.broker.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await Promise.all([radicale.close(), availability.close()]);
    await cleanupBroker(amqp, [200, 400]);
    await db.drop();
  }
}

void main();
