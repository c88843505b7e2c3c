import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { percentile } from './http-load';

const run = promisify(execFile);

export interface PgbenchResult {
  tps: number;
  p50Ms: number;
  p99Ms: number;
  transactions: number;
  failed: number;
}

/** A text literal pgbench leaves alone: it would read `:name` inside JSON (`"x":null`) as a variable. */
const lit = (s: string) => `convert_from(decode('${Buffer.from(s, 'utf8').toString('base64')}', 'base64'), 'UTF8')`;

export type Samples = { outboxPayload: string; storedResponse: string; metadata: string };

/**
 * One create in its own transaction, without group commit (the reference the batched form is measured
 * against), statement for statement as booking.create_bookings runs one item: BEGIN, the key's protocol claim
 * (@sched/idempotency idempotency_claim: advisory lock + lookup), booking insert under the exclusion
 * constraint (ON CONFLICT DO NOTHING), outbox insert with the relay's NOTIFY riding on it, the key row
 * (idempotency_record), COMMIT. Payloads are real ones of the same size. Each transaction books its own hour
 * (a sequence), all for one host, like the HTTP run.
 */
export function statementsScript(samples: Samples): string {
  const start = `(timestamptz '2040-01-01T00:00:00Z' + :n * interval '1 hour')`;
  return `
BEGIN;
SELECT nextval('bench_seq') AS n \\gset
SELECT * FROM booking.idempotency_claim(md5(:n::text), :n::bigint, 'wsp_bench');
INSERT INTO booking.bookings (id, workspace_id, status, version, source, event_type_id, host_id, start_at, end_at, blocked_from, blocked_to, guest_name, guest_email, guest_timezone, meeting_type, join_url, calendar_status, calendar_error_code, calendar_written_at, metadata, created_at, rescheduled_at, cancelled_at) VALUES ('bkg_' || :n, 'wsp_bench', 'confirmed', 1, 'api', 'evt_AAAAAAAAAAAAAAAAAAAAAA', 'hst_AAAAAAAAAAAAAAAAAAAAAA', ${start}, ${start} + interval '30 minutes', ${start}, ${start} + interval '30 minutes', 'Ada Lovelace', 'ada@example.com', 'Europe/London', 'video', NULL, 'pending', NULL, NULL, ${lit(samples.metadata)}::json, now(), NULL, NULL) ON CONFLICT DO NOTHING RETURNING *;
INSERT INTO booking.outbox (id, type, workspace_id, payload) SELECT 'wev_' || :n, 'booking.created', 'wsp_bench', ${lit(samples.outboxPayload)}::jsonb FROM (SELECT pg_notify('booking_outbox', '')) AS n;
SELECT booking.idempotency_record(md5(:n::text), 'wsp_bench', md5('f' || :n), 201, ${lit(samples.storedResponse)}, false, 86400);
COMMIT;
`;
}

/** One item of booking.create_bookings with @N@ / @START@ to fill in (store/create-batch.queries.ts CreateBatchRow). */
export function itemTemplate(samples: Samples): string {
  return JSON.stringify({
    kind: 'insert',
    key_id: 'key-@N@',
    lock_key: '@N@',
    fingerprint: 'fp-@N@',
    retention_s: 86400,
    id: 'bkg_@N@',
    workspace_id: 'wsp_bench',
    source: 'api',
    invitation_id: null,
    event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    host_id: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
    start_at: '@START@',
    end_at: '@END@',
    blocked_from: '@START@',
    blocked_to: '@END@',
    guest_name: 'Ada Lovelace',
    guest_email: 'ada@example.com',
    guest_timezone: 'Europe/London',
    meeting_type: 'video',
    metadata: samples.metadata,
    created_at: '2035-01-01T00:00:00.000Z',
    event_id: 'wev_@N@',
    event: samples.outboxPayload,
    created_body: samples.storedResponse,
    conflict_body: '{"error":{"code":"slot_unavailable","message":"The slot is no longer available."},"meta":{"request_id":"req_x"}}',
  });
}

/**
 * The SQL the service sends for a batch: one call of booking.create_bookings with `size` items (distinct
 * hours, keys and ids per transaction). The items' JSON text is parsed by the server, as the service's
 * parameter is.
 */
function functionScript(samples: Samples, size: number): string {
  const n = `(:n::bigint * ${size} + i)`;
  // (timestamptz)::text, e.g. 2040-01-01 05:00:00+00: no colon in the SQL, where pgbench would see a variable.
  const at = (hours: string) => `(timestamptz '2040-01-01T00:00:00Z' + (${hours}) * interval '1 hour')::text`;
  return `
SELECT nextval('bench_seq') AS n \\gset
SELECT count(*) FROM booking.create_bookings((SELECT jsonb_agg(replace(replace(replace(${lit(itemTemplate(samples))}, '@N@', ${n}::text), '@START@', ${at(n)}), '@END@', ${at(`${n} + 0.5`)})::jsonb) FROM generate_series(0, ${size - 1}) AS i), 'booking_outbox');
`;
}

export type PgbenchScript = { kind: 'statements' } | { kind: 'function'; batchSize: number };

/** Runs pgbench (prepared statements: the best the server can do) against a migrated scratch database. */
export async function runPgbench(opts: {
  adminUrl: string;
  clients: number;
  durationS: number;
  samples: Samples;
  script?: PgbenchScript;
}): Promise<PgbenchResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'booking-pgbench-'));
  try {
    const file = path.join(dir, 'create.sql');
    const which = opts.script ?? { kind: 'statements' };
    await writeFile(file, which.kind === 'statements' ? statementsScript(opts.samples) : functionScript(opts.samples, which.batchSize));
    const bin = process.env.PGBENCH ?? 'pgbench';
    await run('psql', [opts.adminUrl, '-qc', 'CREATE SEQUENCE IF NOT EXISTS bench_seq']);
    const { stdout } = await run(
      bin,
      ['-n', '-M', 'prepared', '-c', String(opts.clients), '-j', '2', '-T', String(opts.durationS), '-f', file, '-l', `--log-prefix=${path.join(dir, 'log')}`, opts.adminUrl],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1]);
    const transactions = Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1]);
    const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0);
    const latencies: number[] = [];
    for (const f of (await readdir(dir)).filter((n) => n.startsWith('log'))) {
      for (const line of (await readFile(path.join(dir, f), 'utf8')).split('\n')) {
        const us = Number(line.split(' ')[2]);
        if (Number.isFinite(us) && line.length > 0) latencies.push(us / 1000);
      }
    }
    latencies.sort((a, b) => a - b);
    return { tps, transactions, failed, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
