/**
 * Issue 18, the physical limit under the burst (system-create-burst): the design creates a Booking in three
 * hops (gateway → booking, booking → availability for the slot check, docs/architecture.md) and one
 * transaction, so this measures those hops and that transaction with none of our service code in them.
 * Run: node --import tsx tests-e2e/bench/create-floor.bench.ts → .data/bench/create-floor.json
 *
 * The burst's load generator (libs/testing runClosedLoop, in this process): 32 closed-loop connections for
 * BENCH_DURATION_S (default 10, the burst's) after a 2 s warm-up, each POSTing a body of the burst's shape
 * (harness createBody) with an API key and its own Idempotency-Key, to
 * - the gateway's position: a bare node:http proxy (floor/two-hop-proxy.ts) that reads the body, signs an
 *   internal credential for `booking` with libs/http's signer and forwards with undici (the gateway's
 *   forward client: keep-alive Pool, dispatch API);
 * - booking's position: a bare node:http server (floor/create-server.ts) that checks the credential with
 *   libs/http's verifier, asks availability's position about the slot (sharing calls as booking does: at
 *   most 2 calls out per workspace and principal, the checks asked meanwhile together in the next), runs the create transaction
 *   as booking commits it (--group-commit: the creates asked while 2 calls are out go together as one call of
 *   booking.create_bookings, up to 64, pgbench-booking.ts's item per create, through pg with a pool of
 *   booking's size) and answers 201 with a body of the create's answer size;
 * - availability's position: a bare node:http server checking the credential and answering one slot check
 *   (floor/verifying-server.ts).
 * Then the same without the slot-check hop (two hops), and pgbench of the same transaction right after
 * (32 clients, same duration). Each variant on a fresh database; every process at this process's priority.
 *
 * Figures per variant: creates/s, p50/p99, its ratio to the pgbench run, CPU ms per create of each process
 * (proxy, server, availability stub, Postgres, load generator, other) and the machine from /proc (harness
 * startCpuMeter), the CPU stolen by the host. Fails (exit 1) on an answer other than 201, a transport error,
 * a Booking count other than the 201s, or a failed pgbench.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { createTestDatabase } from '@sched/testing';
import { listeningPort, startChild, type Child } from '../../services/availability/bench/processes';
import { runPgbench } from '../../services/booking/bench/pgbench-booking';
import { ROOT, type System } from '../support/system';
import { createFloorPayloads } from './floor/create-transaction';
import { cpuByProcess, p50p99, ratioOf } from './floor-stats';
import {
  LOAD_GENERATOR,
  cpuPerUnit,
  createBody,
  machineFacts,
  progress,
  readCpuTimes,
  round,
  runBench,
  runClosedLoop,
  send,
  startCpuMeter,
  stealPct,
  stealPctOver,
  stealText,
  writeFigures,
  type CpuTimes,
} from './harness';

const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = 2;
const POOL_MAX = Number(process.env.BENCH_FLOOR_POOL_MAX ?? 10);
/** Requests built before the runs and sent in turn (the server books by its own sequence, not by the body). */
const PREBUILT = 4096;
const PROXY = 'proxy (gateway)';
const SERVER = 'server (booking)';
const STUB = 'availability stub';
const log = progress('create-floor');

const measured: Array<{ before: CpuTimes; after: CpuTimes }> = [];

function requests(): Array<{ method: 'POST'; path: string; body: string; headers: Record<string, string> }> {
  const day0 = Date.UTC(2026, 11, 1);
  return Array.from({ length: PREBUILT }, (_, i) => ({
    method: 'POST' as const,
    path: '/v1/bookings',
    body: JSON.stringify(createBody('evt_0123456789abcdefghijkl', new Date(day0 + i * 300_000).toISOString(), i)),
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk_test_0123456789abcdefghijklmnopqrstuv', 'idempotency-key': `floor-${i}` },
  }));
}

async function variant(name: string, opts: { slotCheck: boolean; env: Record<string, string>; dir: string; stubUrl?: string; stubPid?: number; created: string }, failed: string[]) {
  const db = await createTestDatabase({ services: ['booking'] });
  const children: Child[] = [];
  const start = async (entry: string, args: string[]) => {
    const child = startChild(path.join(ROOT, 'tests-e2e/bench/floor', entry), args, { ...opts.env, BENCH_FLOOR_POOL_MAX: String(POOL_MAX) });
    children.push(child);
    return { child, url: `http://127.0.0.1:${await listeningPort(child)}` };
  };
  try {
    await db.adminPool.query('CREATE SEQUENCE IF NOT EXISTS bench_seq');
    const server = await start('create-server.ts', [db.adminUrl, path.join(opts.dir, 'payloads.json'), '--group-commit', ...(opts.slotCheck ? ['--availability', opts.stubUrl!] : [])]);
    const proxy = await start('two-hop-proxy.ts', [server.url, '--sign', '--audience=booking']);
    const built = requests();
    let used = 0;
    const next = () => built[used++ % built.length]!;

    const check = new Pool(proxy.url);
    const first = await send(check, next(), true).finally(() => check.close());
    if (first.status !== 201 || first.body !== opts.created) failed.push(`${name}: the first create answered ${first.status} with ${first.body.length} bytes (201 with ${opts.created.length} expected)`);
    await runClosedLoop({ url: proxy.url, clients: CONNECTIONS, durationS: WARMUP_S, expectStatus: 201, next });

    const count = async () => Number((await db.adminPool.query<{ n: string }>('SELECT count(*) AS n FROM booking.bookings')).rows[0]!.n);
    const before = await count();
    const extra: Record<number, string> = { [proxy.child.proc.pid!]: PROXY, [server.child.proc.pid!]: SERVER, ...(opts.slotCheck && opts.stubPid ? { [opts.stubPid]: STUB } : {}) };
    // No system here: the meter groups the named processes, Postgres, this process (the load generator) and the rest.
    const meter = startCpuMeter({ processes: [], radicale: { dataDir: '/nonexistent/create-floor' } } as unknown as Pick<System, 'processes' | 'radicale'>, extra);
    const r = await runClosedLoop({ url: proxy.url, clients: CONNECTIONS, durationS: DURATION_S, expectStatus: 201, next });
    const snap = meter.stop();
    const stored = (await count()) - before;
    measured.push({ before: snap.before.times, after: snap.after.times });
    const cpu = cpuPerUnit(snap.before, snap.after, r.ok);
    const steal = stealPct(snap.before.times, snap.after.times);
    const others = Object.entries(r.otherStatuses);
    if (others.length > 0) failed.push(`${name}: answers other than 201: ${others.map(([s, k]) => `${k}× ${s}`).join(', ')}`);
    if (r.errors > 0) failed.push(`${name}: ${r.errors} requests had no answer`);
    if (stored !== r.ok) failed.push(`${name}: ${r.ok} creates answered 201 but ${stored} Bookings were stored`);
    const out = {
      creates_per_s: round(r.ok / r.durationS, 1),
      ...p50p99(r.latenciesMs),
      created: r.ok,
      non_201: r.otherStatuses,
      transport_errors: r.errors,
      bookings_stored: stored,
      cpu_ms_per_create: { ...cpuByProcess(cpu.by_group, opts.slotCheck ? [PROXY, SERVER, STUB] : [PROXY, SERVER], LOAD_GENERATOR), machine: cpu.machine_total },
      machine_busy_pct: cpu.machine_busy_pct,
      steal_pct: steal,
    };
    out.p50_ms = round(out.p50_ms);
    out.p99_ms = round(out.p99_ms);
    log(`${name}: ${out.creates_per_s} creates/s, p50 ${out.p50_ms} ms, p99 ${out.p99_ms} ms; CPU ms per create ${JSON.stringify(out.cpu_ms_per_create)}; machine ${out.machine_busy_pct} % busy; ${stealText(steal)}`);
    return out;
  } finally {
    for (const c of children.reverse()) await c.stop();
    await db.drop();
  }
}

runBench(log, async (failed) => {
  const loadBefore = loadavg();
  const env = { INTERNAL_AUTH_KEYS: `floor:${randomBytes(32).toString('base64')}` };
  const payloads = createFloorPayloads();
  const dir = mkdtempSync(path.join(tmpdir(), 'create-floor-'));
  writeFileSync(path.join(dir, 'payloads.json'), JSON.stringify(payloads));
  writeFileSync(path.join(dir, 'slot-check.json'), payloads.slotCheckAnswer);
  const stub = startChild(path.join(ROOT, 'tests-e2e/bench/floor/verifying-server.ts'), [path.join(dir, 'slot-check.json')], env);
  try {
    const stubUrl = `http://127.0.0.1:${await listeningPort(stub)}`;
    const common = { env, dir, stubUrl, stubPid: stub.proc.pid, created: payloads.created };
    log(`${CONNECTIONS} connections, ${DURATION_S} s each: three hops (with the slot check), two hops (without), then pgbench`);
    const threeHops = await variant('three hops with the credential and the create transaction', { ...common, slotCheck: true }, failed);
    await stub.stop();
    const twoHops = await variant('two hops (no slot-check call)', { ...common, slotCheck: false }, failed);

    log(`pgbench of the create transaction: ${CONNECTIONS} clients for ${DURATION_S} s`);
    const db = await createTestDatabase({ services: ['booking'] });
    const pgBefore = readCpuTimes();
    const pg = await runPgbench({ adminUrl: db.adminUrl, clients: CONNECTIONS, durationS: DURATION_S, samples: payloads.samples, script: { kind: 'statements' } }).finally(() => db.drop());
    const pgSteal = stealPct(pgBefore, readCpuTimes());
    log(`pgbench: ${round(pg.tps, 1)} tps; ${stealText(pgSteal)}`);
    if (!(pg.tps > 0) || pg.failed > 0) failed.push(`pgbench: ${pg.tps} tps, ${pg.failed} failed transactions`);

    writeFigures('create-floor.json', {
      benchmark: 'create-floor',
      machine: machineFacts(loadBefore, stealPctOver(measured)),
      scenario: {
        connections: CONNECTIONS,
        duration_s: DURATION_S,
        warmup_s: WARMUP_S,
        pool_max: POOL_MAX,
        request_bytes: Buffer.byteLength(requests()[0]!.body),
        response_bytes: Buffer.byteLength(payloads.created),
        slot_check_answer_bytes: Buffer.byteLength(payloads.slotCheckAnswer),
        load_generator: 'libs/testing runClosedLoop, in the bench process',
        commit: 'group-committed as booking commits creates: at most 2 calls of booking.create_bookings out, the creates asked meanwhile together in the next (up to 64)',
        slot_check: 'shared as booking shares them: at most 2 calls out per workspace and principal, the checks asked meanwhile together in the next (up to 32)',
      },
      three_hops: { ...threeHops, ratio_of_pgbench: ratioOf(threeHops.creates_per_s, pg.tps) },
      two_hops: { ...twoHops, ratio_of_pgbench: ratioOf(twoHops.creates_per_s, pg.tps) },
      pgbench: { tps: round(pg.tps, 1), p50_ms: round(pg.p50Ms), p99_ms: round(pg.p99Ms), transactions: pg.transactions, failed: pg.failed, steal_pct: pgSteal },
      failed_checks: failed,
    });
  } finally {
    await stub.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
