// What one Booking's calendar write costs calendar-sync, counted (issue 18; docs/calendar-sync.md, "What a
// write costs"): BOOKINGS booking.created messages through the real consumer, spread over HOSTS hosts each
// with its own Radicale calendar, as the whole-system sustained bench writes them (phone meetings,
// LOG_LEVEL info). calendar-sync runs as its own process, bundled with scripts/build.mjs's esbuild options
// (pg left outside the bundle so the probe sees its queries; SERVICE_ENTRY=tsx runs src/main.ts under tsx
// instead), started with Node's flags of the image and tests-e2e/support/system.ts (none), with
// bench/write-probe.ts preloaded, which counts inside it: CPU (process.cpuUsage), every query its pg
// client sends (round trips, statements by kind, BEGIN / COMMIT), the HTTP requests it makes and the TCP
// connections it opens. Beside them, from /proc: the CPU of its Postgres backends (schedstat) and of
// Radicale.
//
//   node --import tsx services/calendar-sync/bench/write.bench.ts
//   BOOKINGS=300 HOSTS=10 RATE=50 (messages/s; 0 = all at once) WARMUP=20
//   SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/calprof/cs', then
//   node scripts/cpu-profile-report.mjs /tmp/calprof <BOOKINGS> <interval_monotonic_us>   (the profile cut to the measured interval)
//   SERVICE_SRC=<another copy of src/> (before/after runs, see bundle())
//   SERVICE_STDOUT=<file> keeps the service's stdout (its log lines; --trace-gc in SERVICE_NODE_ARGS)
//
// The figures are per Booking, after WARMUP bookings (not counted) have been written and reported.
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import { openSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { newId, toTimestamp, type InternalHost } from '@sched/contracts';
import { createTestDatabase, freePort, makeBooking, startRadicale, testAmqp, waitFor, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { at, call, cleanupBroker, SECRETS_KEY, startPublisher } from '../test/support/harness';

const BOOKINGS = Number(process.env.BOOKINGS ?? 300);
const HOSTS = Number(process.env.HOSTS ?? 10);
const RATE = Number(process.env.RATE ?? 50);
const WARMUP = Number(process.env.WARMUP ?? 20);
const RETRY_DELAYS = [2000, 10000, 60000];

interface ProbeCounts {
  roundTrips: number;
  statements: number;
  begins: number;
  commits: number;
  byKind: Record<string, number>;
  httpRequests: Record<string, number>;
  tcpConnects: number;
  cpuUs: number;
  sysUs: number;
  threadsUs: Record<string, number>;
}

function cpuMsOfPid(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, clock ticks of 10 ms
}

function pidOfPort(port: number): number {
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`]).toString();
  return Number(/pid=(\d+)/.exec(out)?.[1]);
}

const diff = (a: Record<string, number>, b: Record<string, number>) => {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = (b[k] ?? 0) - (a[k] ?? 0);
    if (d !== 0) out[k] = Math.round((d / BOOKINGS) * 100) / 100;
  }
  return out;
};
const per = (n: number, digits = 2) => Math.round((n / BOOKINGS) * 10 ** digits) / 10 ** digits;

/**
 * availability's host API for the admin PUTs, answering with `connection: close`: the service's client
 * keeps no idle socket whose timeout would fire inside the measured interval. (The first error whose
 * stack Node reads makes it parse the bundle's whole source map, about half a second once per process:
 * here that happens while the hosts are connected.)
 */
async function startHostStub(): Promise<{ url: string; addHost(ws: string): InternalHost; close(): Promise<void> }> {
  const hosts = new Map<string, InternalHost>();
  const server = http.createServer((req, res) => {
    const m = /^\/internal\/v1\/workspaces\/([^/]+)\/hosts\/([^/?]+)$/.exec(req.url ?? '');
    const host = m ? hosts.get(`${m[1]}/${m[2]}`) : undefined;
    res.writeHead(host ? 200 : 404, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify(host ? { data: host, meta: { request_id: 'req_x' } } : { error: { code: 'not_found', message: 'not found', details: [] }, meta: { request_id: 'req_x' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    addHost(ws) {
      const host: InternalHost = { id: newId('hst'), name: 'Bench Host', email: 'host@example.com', timezone: 'UTC', conferencing_url_template: null };
      hosts.set(`${ws}/${host.id}`, host);
      return host;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The service as scripts/build.mjs bundles it, except pg (external, so the probe's counting applies to it). */
async function bundle(): Promise<string> {
  // SERVICE_SRC: another copy of src/ to compare with, e.g. an older commit's (`git archive <commit>
  // services/calendar-sync/src | tar -x -C services/calendar-sync/dist/base --strip-components=2`, then
  // SERVICE_SRC=services/calendar-sync/dist/base/src); inside the service folder, so its packages resolve.
  const src = process.env.SERVICE_SRC ? resolve(process.env.SERVICE_SRC) : join(__dirname, '../src');
  const outfile = join(__dirname, `../dist/bench-main-${createHash('sha1').update(src).digest('hex').slice(0, 8)}.js`);
  await build({
    entryPoints: [join(src, 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'linked',
    logLevel: 'warning',
    external: ['pg', 'pg-native', 'cpu-features', 'bufferutil', 'utf-8-validate'],
  });
  return outfile;
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ services: ['calendar-sync'] });
  const users = Object.fromEntries(Array.from({ length: HOSTS }, (_, i) => [`host${i}`, `bench-password-${i}`]));
  const radicale = await startRadicale({ users });
  const availability = await startHostStub();
  const amqp = testAmqp();
  const port = await freePort();
  const entry = process.env.SERVICE_ENTRY === 'tsx' ? join(__dirname, '../src/main.ts') : await bundle();
  const child = spawn(
    process.execPath,
    [...(process.env.SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', '--import', join(__dirname, 'write-probe.ts'), entry],
    {
      env: {
        ...process.env,
        NODE_ENV: 'development',
        PORT: String(port),
        DATABASE_URL: db.urlFor('calendar-sync'),
        AMQP_URL: amqp.url,
        AMQP_PREFIX: amqp.prefix,
        AVAILABILITY_URL: availability.url,
        SECRETS_KEY,
        INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
        CALENDAR_WRITE_RETRY_DELAYS_MS: RETRY_DELAYS.join(','),
      },
      // SERVICE_STDOUT=<file>: the service's log lines (and e.g. --trace-gc's) go there instead of nowhere.
      stdio: ['ignore', process.env.SERVICE_STDOUT ? openSync(process.env.SERVICE_STDOUT, 'w') : 'ignore', 'inherit', 'ipc'],
    },
  );
  const probe = () =>
    new Promise<ProbeCounts>((resolve) => {
      const onMessage = (m: { probe?: string; counts: ProbeCounts }) => {
        if (m?.probe !== 'counts') return;
        child.off('message', onMessage);
        resolve(m.counts);
      };
      child.on('message', onMessage);
      child.send({ probe: 'counts' });
    });
  const svcUrl = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${svcUrl}/readyz`).catch(() => undefined))?.ok, { timeoutMs: 60_000 });
  const publisher = await startPublisher(amqp);
  try {
    const ws = `wsp_bench${Date.now()}`;
    const hosts: string[] = [];
    for (let i = 0; i < HOSTS; i++) {
      const user = `host${i}`;
      const host = availability.addHost(ws);
      await radicale.makeCalendar(user, 'bench');
      const put = await call(svcUrl, 'PUT', `/admin/v1/workspaces/${ws}/hosts/${host.id}/calendar`, {
        provider: 'caldav',
        url: radicale.url,
        username: user,
        password: users[user],
        calendar_url: `${radicale.url}/${user}/bench/`,
      });
      if (put.status !== 201) throw new Error(`connect failed: ${put.status} ${put.text}`);
      hosts.push(host.id);
    }
    const synced = async () => Number((await db.adminPool.query(`SELECT count(*) FROM calendar_sync.booking_syncs WHERE status = 'synced'`)).rows[0].count);
    const unpublished = async () => Number((await db.adminPool.query(`SELECT count(*) FROM calendar_sync.outbox WHERE published_at IS NULL`)).rows[0].count);
    let sent = 0;
    const send = async (n: number, rate: number) => {
      const t0 = Date.now();
      for (let i = 0; i < n; i++, sent++) {
        const booking = makeBooking({ host_id: hosts[sent % HOSTS]!, start_at: toTimestamp(at(2 + (sent % 60), 7, sent % 600)), meeting: { type: 'phone', join_url: null } });
        await publisher.publish('booking.created', ws, booking);
        if (rate > 0) {
          const due = t0 + ((i + 1) * 1000) / rate;
          if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        }
      }
    };
    const settled = async (total: number) => {
      await waitFor(async () => (await synced()) === total && (await unpublished()) === 0, { timeoutMs: 180_000, intervalMs: 100 });
    };
    await send(WARMUP, 20);
    await settled(WARMUP);

    const backends = async () => {
      const { rows } = await db.adminPool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND usename = 'svc_calendar_sync'`, [db.name]);
      const out = new Map<number, number>();
      for (const { pid } of rows) {
        try {
          out.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
        } catch {
          // gone
        }
      }
      return out;
    };
    const radicalePid = pidOfPort(radicale.port);
    const before = await probe();
    const pg0 = await backends();
    const rad0 = cpuMsOfPid(radicalePid);
    const t0 = Date.now();
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    await send(BOOKINGS, RATE);
    await settled(WARMUP + BOOKINGS);
    const elapsedMs = Date.now() - t0;
    const toUs = Number(process.hrtime.bigint() / 1000n);
    const after = await probe();
    const pg1 = await backends();
    const rad = cpuMsOfPid(radicalePid) - rad0;
    let pgNs = 0;
    for (const [pid, t] of pg1) pgNs += t - (pg0.get(pid) ?? t);
    const figures = {
      bench: 'calendar-sync-write',
      bookings: BOOKINGS,
      hosts: HOSTS,
      rate_per_s: RATE,
      elapsed_ms: elapsedMs,
      // Cut a --cpu-prof profile to it: node scripts/cpu-profile-report.mjs <dir> <bookings> <from> <to>
      interval_monotonic_us: [fromUs, toUs],
      per_booking: {
        calendar_sync_cpu_ms: per((after.cpuUs - before.cpuUs) / 1000, 3),
        calendar_sync_cpu_ms_in_kernel: per((after.sysUs - before.sysUs) / 1000, 3),
        // By thread, from /proc (10 ms ticks: rough below a few hundred Bookings).
        calendar_sync_cpu_ms_by_thread: Object.fromEntries(Object.entries(diff(before.threadsUs, after.threadsUs)).map(([k, us]) => [k, Math.round(us) / 1000])),
        postgres_backend_cpu_ms: per(pgNs / 1e6, 3),
        radicale_cpu_ms: per(rad),
        pg_round_trips: per(after.roundTrips - before.roundTrips),
        pg_statements: per(after.statements - before.statements),
        pg_transactions: per(after.begins - before.begins),
        pg_commits: per(after.commits - before.commits),
        http_requests: diff(before.httpRequests, after.httpRequests),
        tcp_connects: per(after.tcpConnects - before.tcpConnects),
        statements_by_kind: diff(before.byKind, after.byKind),
      },
    };
    process.stdout.write(`${JSON.stringify(figures, null, 1)}\n`);
  } finally {
    await publisher.broker.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await Promise.all([radicale.close(), availability.close()]);
    await cleanupBroker(amqp, RETRY_DELAYS);
    await db.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
