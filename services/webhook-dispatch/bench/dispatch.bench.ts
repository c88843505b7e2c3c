/**
 * Latency of webhook dispatch alone: from publishing a booking.created on the (prefixed) events
 * exchange, as the booking service's outbox relay does, to the webhook arriving at a local receiver.
 * 50 events/s for 20 s by default; the service runs in this process (consumer, the ingest statement
 * with its inbox row and claim, signed HTTP POST, attempt record), on the local Postgres and RabbitMQ.
 * Besides latency it reports CPU ms per event of this process (service, publisher and receiver
 * together: compare runs, not absolutes) and of the Postgres backends of the test database, read
 * from /proc, and the database's commits per event.
 *
 *   node --import tsx services/webhook-dispatch/bench/dispatch.bench.ts
 *   BENCH_RATE=100 BENCH_SECONDS=10 node --import tsx services/webhook-dispatch/bench/dispatch.bench.ts
 *
 * Prints a JSON object of its figures on the last line and writes it to .data/bench/webhook-dispatch.json.
 * The create→webhook figure through the booking service is measured end to end elsewhere.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { newId } from '@sched/contracts';
import { createTestDatabase, testAmqp, type TestDatabase } from '@sched/testing';
import { cleanupBroker, createEndpoint, startDispatch, startPublisher, startReceiver } from '../test/support/dispatch-harness';

const RATE = Number(process.env.BENCH_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const OUT = path.resolve(__dirname, '../../../.data/bench/webhook-dispatch.json');

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
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
  const svc = await startDispatch(db, amqp, { LOG_LEVEL: 'warn', WEBHOOK_RETRY_SCHEDULE_MS: '5000,300000,1800000,7200000,18000000,36000000,36000000', WEBHOOK_JITTER_RATIO: '0.1', WEBHOOK_TIMEOUT_MS: '10000' });
  const pub = await startPublisher(amqp);
  const receiver = await startReceiver();
  const published = new Map<string, number>();
  const arrived = new Map<string, number>();
  try {
    const ws = newId('wsp');
    await createEndpoint(svc.url, ws, receiver.url, ['booking.created']);
    // Warm-up (connections, JIT, prepared plans), not measured.
    for (let i = 0; i < 20; i++) await pub.publish('booking.created', ws);
    while (receiver.requests.length < 20) await new Promise((r) => setTimeout(r, 20));
    receiver.requests.length = 0;

    const total = RATE * SECONDS;
    const dbBefore = await databaseCost(db);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < total; i++) {
      // Open-loop schedule: event i goes out at i / RATE seconds whatever happened before.
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const t0 = Date.now();
      const id = newId('wev');
      published.set(id, t0);
      sends.push(pub.publish('booking.created', ws, { id }));
    }
    await Promise.all(sends);
    const deadline = Date.now() + 30_000;
    while (receiver.requests.length < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const r of receiver.requests) arrived.set(String(r.headers['webhook-id']), r.at);
    // Sampled once everything arrived: the pg_stat_database counters are flushed by the backends
    // within a second or so, hence the short pause.
    const cpu = process.cpuUsage(cpuBefore);
    await new Promise((r) => setTimeout(r, 1500));
    const dbAfter = await databaseCost(db);

    const latencies = [...published].flatMap(([id, t0]) => (arrived.has(id) ? [arrived.get(id)! - t0] : [])).sort((a, b) => a - b);
    const result = {
      bench: 'webhook-dispatch',
      what: 'publish of booking.created on the events exchange -> signed webhook received (ms)',
      rate_per_s: RATE,
      seconds: SECONDS,
      published: total,
      received: latencies.length,
      duplicates: receiver.requests.length - arrived.size,
      p50_ms: round(percentile(latencies, 50)),
      p90_ms: round(percentile(latencies, 90)),
      p99_ms: round(percentile(latencies, 99)),
      max_ms: round(latencies[latencies.length - 1] ?? NaN),
      // This process runs the service, the publisher and the receiver: compare before/after, not absolute.
      process_cpu_ms_per_event: round2((cpu.user + cpu.system) / 1000 / total),
      // Postgres backends of this database (the service's pools; the backend reading these figures excluded).
      postgres_cpu_ms_per_event: round2(backendCpuDelta(dbBefore.cpuMsByPid, dbAfter.cpuMsByPid) / total),
      commits_per_event: round2((dbAfter.commits - dbBefore.commits) / total),
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
    await svc.stop();
    await pub.close();
    await receiver.close();
    await cleanupBroker(amqp);
    await db.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
