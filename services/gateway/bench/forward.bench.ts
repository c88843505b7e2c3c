/**
 * The gateway alone: CPU per request of its /v1 hop (key auth, rate limit, scope check, the internal
 * credential, forwarding), with every upstream a bare Node stub in this process. Run:
 * `node --import tsx services/gateway/bench/forward.bench.ts` (Postgres running). Two closed-loop runs
 * of BENCH_DURATION_S (default 10) at 50 connections through one API key: GET Slots (the stub answers
 * a body of the Slots locator's size, about 24.7 KB) and POST /v1/bookings (the stub answers 201 with
 * a Booking). Prints, per run, requests/s and the gateway process's CPU (user + system, from /proc)
 * per request: on a shared machine that figure moves much less than the latencies. BENCH_PROFILE_DIR
 * writes a CPU profile of the gateway there; BENCH_ONLY=get or post runs one of the two; BENCH_PIN=1
 * pins the gateway to CPU 1 and the load generator with the stubs to CPU 0 (taskset); BENCH_REQUESTS
 * makes each run a fixed number of requests instead; BENCH_BUILT=1 runs the gateway's bundle
 * (dist/main.js, `node scripts/build.mjs`), as the image and the whole-system benches do, instead of
 * its source through tsx. Not part of `pnpm bench`: a locator for the gateway's own
 * code (the Slots locator, services/availability/bench/slots.bench.ts, has the gateway row with the
 * real availability behind it).
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { createTestDatabase, freePort, TEST_INTERNAL_AUTH_KEYS, type TestDatabase } from '@sched/testing';
import { startService, waitReady } from '../../availability/bench/processes';

const CONNECTIONS = 50;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
/** BENCH_REQUESTS: a fixed number of requests per run instead of BENCH_DURATION_S (the same work before and after a change). */
const AMOUNT = process.env.BENCH_REQUESTS ? Number(process.env.BENCH_REQUESTS) : undefined;
const length = (): { duration?: number; amount?: number } => (AMOUNT ? { amount: AMOUNT } : { duration: DURATION_S });
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123456789';
const log = (msg: string) => process.stderr.write(`[bench gateway] ${msg}\n`);

/** About the Slots locator's answer: 31 days of a 30-minute grid, as availability writes it. */
function slotsBody(): Buffer {
  const data: Array<{ start_at: string; end_at: string }> = [];
  let t = Date.UTC(2035, 0, 1, 12);
  while (JSON.stringify(data).length < 24_600) {
    data.push({ start_at: new Date(t).toISOString().replace('.000', ''), end_at: new Date(t + 1_800_000).toISOString().replace('.000', '') });
    t += 1_800_000;
  }
  return Buffer.from(JSON.stringify({ data, meta: { request_id: 'req_stub' } }));
}

const BOOKING = Buffer.from(
  JSON.stringify({
    data: {
      id: 'bkg_AAAAAAAAAAAAAAAAAAAAAA',
      event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
      status: 'confirmed',
      start_at: '2035-01-01T12:00:00Z',
      end_at: '2035-01-01T12:30:00Z',
      guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
      metadata: { order: 'o-1', channel: 'bench' },
      version: 1,
      created_at: '2035-01-01T00:00:00Z',
    },
    meta: { request_id: 'req_stub' },
  }),
);

function startStub(): Promise<{ url: string; close(): void }> {
  const slots = slotsBody();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = req.method === 'GET' ? slots : BOOKING;
      res.writeHead(req.method === 'GET' ? 200 : 201, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}`, close: () => server.close() });
    }),
  );
}

/** CPU time (user + system, or one of them) a process has used so far, in ms, from /proc. */
function cpuMs(pid: number, only?: 'user' | 'system'): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const [user, system] = [Number(fields[11]), Number(fields[12])];
  return ((only === 'user' ? user : only === 'system' ? system : user + system) * 1000) / 100;
}

type Options = { url: string; connections: number; duration?: number; amount?: number; headers: Record<string, string>; method?: string; body?: string };
type Outcome = { requests: { total: number; average: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number; timeouts: number };
const run = autocannon as unknown as (opts: Options) => Promise<Outcome>;

/** Transactions committed in the gateway's database so far (each rate-limit upsert is one), from pg_stat_database. */
async function commits(db: TestDatabase): Promise<number> {
  // Backends report their counts when idle (within about a second).
  await new Promise((r) => setTimeout(r, 1500));
  const { rows } = await db.adminPool.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [db.name]);
  return Number(rows[0]!.n);
}

async function measure(pid: number, db: TestDatabase, opts: Options) {
  const commitsBefore = await commits(db);
  const before = cpuMs(pid);
  const systemBefore = cpuMs(pid, 'system');
  const r = await run(opts);
  const cpu = cpuMs(pid) - before;
  const total = Math.max(1, r.requests.total);
  return {
    requests: r.requests.total,
    requests_per_s: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    non_2xx_or_errors: r.non2xx + r.errors + r.timeouts,
    gateway_cpu_us_per_request: Math.round((cpu * 1000) / total),
    gateway_system_cpu_us_per_request: Math.round((cpuMs(pid, 'system') - systemBefore) * 1000 / total),
    // Rate-limit upserts (and anything else the gateway committed) per request.
    commits_per_request: Math.round(((await commits(db)) - commitsBefore) / total * 1000) / 1000,
  };
}

async function call(url: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` }, body: JSON.stringify(body) });
  const json = (await res.json()) as { data: Record<string, string> };
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ services: ['gateway'] });
  const stub = await startStub();
  const [port, opsPort] = [await freePort(), await freePort()];
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const gateway = startService(
    'gateway',
    {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      NODE_ENV: 'production',
      PORT: String(port),
      OPS_PORT: String(opsPort),
      DATABASE_URL: db.urlFor('gateway'),
      ADMIN_TOKEN,
      INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
      AVAILABILITY_URL: stub.url,
      BOOKING_URL: stub.url,
      INVITATION_URL: stub.url,
      CALENDAR_SYNC_URL: stub.url,
      WEBHOOK_DISPATCH_URL: stub.url,
    },
    profile,
  );
  try {
    await waitReady(gateway, `http://127.0.0.1:${opsPort}`);
    const url = `http://127.0.0.1:${port}`;
    const ws = (await call(`${url}/admin/v1/workspaces`, { name: 'Bench' })).id!;
    const { key } = await call(`${url}/admin/v1/workspaces/${ws}/api-keys`, {
      name: 'bench',
      scopes: ['slots:read', 'bookings:write'],
      rate_limit: { limit: 100_000, window_seconds: 1 },
    });
    const auth = { authorization: `Bearer ${key}` };
    const slots = { url: `${url}/v1/event-types/evt_AAAAAAAAAAAAAAAAAAAAAA/slots?from=2035-01-01&to=2035-01-31&timezone=Europe%2FBerlin`, connections: CONNECTIONS, headers: auth };
    const body = JSON.stringify({
      event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
      start_at: '2035-01-01T12:00:00Z',
      guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
      metadata: { order: 'o-1', channel: 'bench' },
    });
    const create = { url: `${url}/v1/bookings`, connections: CONNECTIONS, method: 'POST', body, headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'bench-1' } };
    const pid = gateway.proc.pid!;
    // BENCH_PIN=1: the gateway (all its threads) on CPU 1, this process (load generator, stubs) on CPU 0.
    if (process.env.BENCH_PIN) {
      execFileSync('taskset', ['-a', '-p', '-c', '1', String(pid)], { stdio: 'ignore' });
      execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    }
    // BENCH_ONLY=get or post: one of the two runs (e.g. for a profile of one path).
    const only = process.env.BENCH_ONLY;
    log('warming up');
    if (only !== 'post') await run({ ...slots, duration: 3 });
    if (only !== 'get') await run({ ...create, duration: 3 });
    log(`GET slots${AMOUNT ? `: ${AMOUNT} requests` : ''}`);
    const get = only === 'post' ? undefined : await measure(pid, db, { ...slots, ...length() });
    if (only !== 'get') log('POST bookings');
    const post = only === 'get' ? undefined : await measure(pid, db, { ...create, ...length() });
    process.stdout.write(`${JSON.stringify({ benchmark: 'gateway-forward', connections: CONNECTIONS, duration_s: DURATION_S, slots_get: get, booking_post: post })}\n`);
  } finally {
    await gateway.stop();
    stub.close();
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
