// Busy-times API of calendar-sync against a real Radicale: cost of a full read of the cached range, of a
// ctag-probe refresh (calendar unchanged), and throughput when served from a fresh snapshot.
// Run: node --import tsx services/calendar-sync/bench/busy.bench.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, credentialFor, startRadicale, testAmqp } from '@sched/testing';
import {
  call,
  cleanupBroker,
  startAvailabilityStub,
  startCalendarSync,
} from '../test/support/harness';
import { seedConnectedCalendar } from './seeded-calendar';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<{ requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number }>;

const EVENTS = 300;
const ROUNDS = 15;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ services: ['calendar-sync'] });
  const radicale = await startRadicale({ users: { alice: 'bench-password' } });
  const availability = await startAvailabilityStub();
  const amqp = testAmqp();
  const svc = await startCalendarSync({ db, amqp, availabilityUrl: availability.url, env: { LOG_LEVEL: 'warn' } });
  try {
    // Singles spread over the cached range, plus weekly series that must be expanded.
    const { busyPath: path } = await seedConnectedCalendar({ svcUrl: svc.url, radicale, availability, user: 'alice', password: 'bench-password', events: EVENTS, weeklyEvery: 10 });

    const timed = async (prepare: string): Promise<number> => {
      await db.adminPool.query(prepare);
      const t = process.hrtime.bigint();
      const res = await call(svc.url, 'GET', path);
      if (res.status !== 200) throw new Error(`busy answered ${res.status}`);
      return Number(process.hrtime.bigint() - t) / 1e6;
    };
    const full: number[] = [];
    const probe: number[] = [];
    for (let i = 0; i < ROUNDS; i++) full.push(await timed('DELETE FROM calendar_sync.busy_snapshots'));
    for (let i = 0; i < ROUNDS; i++) probe.push(await timed(`UPDATE calendar_sync.busy_snapshots SET fetched_at = now() - interval '10 minutes'`));

    await call(svc.url, 'GET', path);
    // The credential availability would send (internal routes refuse calls without one, 401).
    const warm = await autocannon({ url: `${svc.url}${path}`, connections: 10, duration: 5, headers: await credentialFor('calendar-sync', path) });
    if (warm.non2xx > 0) throw new Error(`warm snapshot run: ${warm.non2xx} answers were not 2xx; the figure would measure errors`);

    const figures = {
      bench: 'calendar-sync-busy',
      calendar_events: EVENTS,
      full_read_ms_median: Math.round(median(full) * 10) / 10,
      ctag_probe_refresh_ms_median: Math.round(median(probe) * 10) / 10,
      warm_snapshot_rps: Math.round(warm.requests.average),
      warm_snapshot_latency_ms_p50: warm.latency.p50,
      warm_snapshot_latency_ms_p99: warm.latency.p99,
      warm_non_2xx: warm.non2xx,
    };
    const dir = join(__dirname, '../../../.data/bench');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'calendar-sync-busy.json'), JSON.stringify(figures, null, 2));
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await svc.stop();
    await Promise.all([radicale.close(), availability.close()]);
    await cleanupBroker(amqp, [200, 400]);
    await db.drop();
  }
}

void main();
