/**
 * Latency and CPU of webhook dispatch alone: from publishing a booking.created on the (prefixed) events
 * exchange, as the booking service's outbox relay does, to the webhook arriving at a local receiver.
 * 50 events/s for 20 s by default; the service runs in this process (consumer, the ingest statement
 * with its inbox row and claim, signed HTTP POST, attempt record), on the local Postgres and RabbitMQ.
 * The publisher and the receiver run in a child process (bench/dispatch-load.ts), so the CPU this
 * process reports (from /proc, user + system) is the service's own, from the first event published
 * until every delivery's attempt is recorded. Also: CPU of the Postgres backends of the test
 * database, the database's commits per event, and the load side's CPU.
 *
 *   node --import tsx services/webhook-dispatch/bench/dispatch.bench.ts
 *   BENCH_RATE=100 BENCH_SECONDS=10 node --import tsx services/webhook-dispatch/bench/dispatch.bench.ts
 *
 * Before the warm-up the deliveries table gets BENCH_HISTORY (20,000) delivered rows and is analysed,
 * as a running system's is (30 days of deliveries are kept): Postgres plans prepared statements for the
 * table it finds and keeps those plans, so a bench starting on an empty table measures plans no running
 * system has.
 * BENCH_BATCH=n publishes the events n at a time (same mean rate), as a relay round carrying several
 * events does. BENCH_LOG_LEVEL (default info, as `npm start` runs) is the service's log level; its log
 * lines go to a stream that drops them. For a CPU profile of the service alone, run this file with
 * `node --cpu-prof --cpu-prof-dir=/tmp/prof/dispatch --import tsx …` (the child is not profiled) and read it
 * per event, cut to the `interval_us` it prints: `node scripts/cpu-profile-report.mjs /tmp/prof <events> <from> <to>`.
 *
 * Prints a JSON object of its figures on the last line and writes it to .data/bench/webhook-dispatch.json.
 * The create→webhook figure through the booking service is measured end to end elsewhere.
 */
import { fork } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { newId } from '@sched/contracts';
import { createTestDatabase, testAmqp, type TestDatabase } from '@sched/testing';
import { cleanupBroker, createEndpoint, startDispatch } from '../test/support/dispatch-harness';

const RATE = Number(process.env.BENCH_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const BATCH = Math.max(1, Number(process.env.BENCH_BATCH ?? 1));
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const WARM_UP = 50;
const HISTORY = Number(process.env.BENCH_HISTORY ?? 20_000);
const OUT = path.resolve(__dirname, '../../../.data/bench/webhook-dispatch.json');

/** The load process (bench/dispatch-load.ts): its messages, in order. */
interface LoadReport {
  latencies: number[];
  requests: number;
  distinct: number;
  cpuMs: number;
}

function startLoad(amqp: { url: string; prefix: string }) {
  const child = fork(path.join(__dirname, 'dispatch-load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_AMQP_URL: amqp.url, BENCH_AMQP_PREFIX: amqp.prefix },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>(): Promise<T> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`load process exited (${code})`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m as T);
      });
    });
  return {
    child,
    next,
    send: (m: unknown) => child.send(m as never),
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
const round = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** CPU ms (user + system) of one process from /proc/<pid>/stat; 0 once it is gone. */
function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line (11 and 12 after the command name), in clock ticks.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/**
 * What the database spent: CPU of the Postgres backends serving this test database (read from /proc,
 * summed per backend over the window) and its committed transactions.
 */
async function databaseCost(db: TestDatabase): Promise<{ cpuMsByPid: Map<number, number>; commits: number }> {
  const backends = await db.adminPool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  const stats = await db.adminPool.query<{ commits: string }>('SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()');
  return { cpuMsByPid: new Map(backends.rows.map((r) => [r.pid, procCpuMs(r.pid)])), commits: Number(stats.rows[0]?.commits ?? 0) };
}

function backendCpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ services: ['webhook-dispatch'] });
  const amqp = testAmqp();
  const svc = await startDispatch(db, amqp, {
    LOG_LEVEL,
    WEBHOOK_RETRY_SCHEDULE_MS: '5000,300000,1800000,7200000,18000000,36000000,36000000',
    WEBHOOK_JITTER_RATIO: '0.1',
    WEBHOOK_TIMEOUT_MS: '10000',
  });
  const load = startLoad(amqp);
  try {
    const { ready: receiverUrl } = await load.next<{ ready: string }>();
    const ws = newId('wsp');
    const endpoint = await createEndpoint(svc.url, ws, receiverUrl, ['booking.created']);
    if (HISTORY > 0) {
      // Delivered webhooks of the last days, as a running system keeps (RETENTION_DELIVERIES_DAYS):
      // Postgres plans the service's prepared statements for the tables they find, and keeps the plans.
      await db.adminPool.query(
        `INSERT INTO webhook_dispatch.deliveries (id, workspace_id, endpoint_id, event_id, event_type, body, status, attempt_count, round_attempts, succeeded_at, created_at)
         SELECT 'whd_history' || g, $1, $2, 'wev_history' || g, 'booking.created', repeat('x', 900), 'succeeded', 1, 1, now(), now()
         FROM generate_series(1, $3::int) g`,
        [ws, endpoint.id, HISTORY],
      );
      await db.adminPool.query('ANALYZE');
    }
    // Warm-up (connections, JIT, prepared plans), not measured.
    load.send({ cmd: 'warm', ws, events: WARM_UP });
    await load.next();

    const total = RATE * SECONDS;
    // Successful attempts recorded (the history has none).
    const recorded = async () =>
      Number((await db.adminPool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_dispatch.attempts WHERE status_code = 200')).rows[0]!.n);
    const dbBefore = await databaseCost(db);
    const cpuBefore = process.cpuUsage();
    const fromUs = monotonicUs();
    load.send({ cmd: 'run', ws, rate: RATE, seconds: SECONDS, batch: BATCH });
    const report = await load.next<LoadReport>();
    // The service's work for an event ends with its attempt record, a little after the receiver answered.
    const deadline = Date.now() + 10_000;
    while ((await recorded()) < WARM_UP + total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const cpu = process.cpuUsage(cpuBefore);
    const toUs = monotonicUs();
    // Sampled once everything arrived: the pg_stat_database counters are flushed by the backends
    // within a second or so, hence the short pause.
    await new Promise((r) => setTimeout(r, 1500));
    const dbAfter = await databaseCost(db);

    const latencies = report.latencies.sort((a, b) => a - b);
    const result = {
      bench: 'webhook-dispatch',
      what: 'publish of booking.created on the events exchange -> signed webhook received (ms)',
      rate_per_s: RATE,
      seconds: SECONDS,
      batch: BATCH,
      history: HISTORY,
      log_level: LOG_LEVEL,
      published: total,
      received: latencies.length,
      duplicates: report.requests - report.distinct,
      p50_ms: round(percentile(latencies, 50)),
      p90_ms: round(percentile(latencies, 90)),
      p99_ms: round(percentile(latencies, 99)),
      max_ms: round(latencies[latencies.length - 1] ?? NaN),
      // This process runs the service alone (the publisher and the receiver are in the child).
      service_cpu_ms_per_event: round2((cpu.user + cpu.system) / 1000 / total),
      // Of which in the kernel (system calls: on loopback a write also runs the receiving side's TCP work).
      service_system_ms_per_event: round2(cpu.system / 1000 / total),
      load_cpu_ms_per_event: round2(report.cpuMs / total),
      // Postgres backends of this database (the service's pools; the backend reading these figures excluded).
      postgres_cpu_ms_per_event: round2(backendCpuDelta(dbBefore.cpuMsByPid, dbAfter.cpuMsByPid) / total),
      commits_per_event: round2((dbAfter.commits - dbBefore.commits) / total),
      // The measured interval on the monotonic clock (µs), to cut a --cpu-prof profile to:
      // node scripts/cpu-profile-report.mjs <dir> <events> <from> <to>, the profile in <dir>/<any name>/.
      interval_us: [fromUs, toUs],
      node: process.version,
      // The machine is shared: read the figures together with how busy it was.
      cpus: cpus().length,
      load_avg_1m: round(loadavg()[0]!),
      at: new Date().toISOString(),
    };
    mkdirSync(path.dirname(OUT), { recursive: true });
    writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    load.send({ cmd: 'close' });
    await new Promise((r) => load.child.once('exit', r));
    await svc.stop();
    await cleanupBroker(amqp);
    await db.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
