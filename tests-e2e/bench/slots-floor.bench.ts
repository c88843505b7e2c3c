/**
 * Issue 18, the physical limit under the whole-system Slots figure: the design answers a Slots request
 * in two Node HTTP hops (gateway → availability, docs/architecture.md), so this measures two bare hops
 * answering the same bytes, with none of our code in them.
 * Run: node --import tsx tests-e2e/bench/slots-floor.bench.ts → .data/bench/slots-floor.json
 * (after system-slots, which leaves the Slots answer it measured in .data/bench/system-slots-answer.json;
 * BENCH_SLOTS_BODY names another file).
 *
 * Three variants, each with the load generator of system-slots (autocannon in this process, 50
 * connections) for the same window (BENCH_SLOTS_WINDOW_S, default 65 s) after a 3 s warm-up, every
 * process at the priority of the gateway and availability (this process's, nice 0 under `pnpm bench`):
 * - one hop: a bare node:http server answering the bytes (services/availability/bench/static-server.ts,
 *   system-slots' "bare Node HTTP" baseline);
 * - two hops: the same server behind a bare node:http proxy that forwards each request with undici, the
 *   gateway's client (floor/two-hop-proxy.ts: keep-alive pool, the dispatch API), and streams the
 *   answer back;
 * - two hops with the internal credential: the proxy signs a credential per request and the server
 *   checks it (floor/verifying-server.ts), both with libs/http's signer and verifier (jose), as the
 *   gateway and availability do: the floor of the design as required.
 *
 * Figures per variant: p50, p99, requests/s, and CPU µs per request of each process (server, proxy,
 * load generator, from /proc) and of the whole machine. Fails (exit 1) when a request fails or answers
 * other than 200, or an answer through the proxies is not the body byte for byte.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { listeningPort, startChild, type Child } from '../../services/availability/bench/processes';
import { ROOT } from '../support/system';
import { microsPerRequest } from './floor-stats';
import { cpuMs, machineBusyMs, machineFacts, progress, readCpuTimes, runBench, stealPct, stealPctOver, stealText, writeFigures, type CpuTimes } from './harness';

const CONNECTIONS = 50;
const WINDOW_S = Number(process.env.BENCH_SLOTS_WINDOW_S ?? 65);
const WARMUP_S = 3;
const BODY_FILE = process.env.BENCH_SLOTS_BODY ?? path.join(ROOT, '.data', 'bench', 'system-slots-answer.json');
/** A request target of the Slots request's length. */
const SLOTS_PATH = '/v1/event-types/evt_0123456789abcdefghijkl/slots?from=2026-12-01&to=2026-12-31&timezone=Europe%2FBerlin';
const log = progress('slots-floor');

/** The machine's CPU times at the start and end of each variant's window: the steal over them. */
const measured: Array<{ before: CpuTimes; after: CpuTimes }> = [];

const bench = (name: string, args: string[], env: Record<string, string> = {}) => startChild(path.join(ROOT, 'tests-e2e/bench', name), args, env);

async function load(url: string, duration: number) {
  const r = await autocannon({ url, connections: CONNECTIONS, duration, headers: { authorization: 'Bearer sk_test_0123456789abcdefghijklmnopqrstuv' } });
  return { p50_ms: r.latency.p50, p99_ms: r.latency.p99, requests_per_s: Math.round(r.requests.average), requests: r.requests.total, non_2xx_or_errors: r.non2xx + r.errors + r.timeouts };
}

async function variant(name: string, processes: Record<string, Child>, frontUrl: string, body: Buffer, failed: string[]) {
  const answer = Buffer.from(await (await fetch(`${frontUrl}${SLOTS_PATH}`)).arrayBuffer());
  if (!answer.equals(body)) failed.push(`${name}: the answer is not the body (${answer.length} bytes, ${body.length} expected)`);
  await load(`${frontUrl}${SLOTS_PATH}`, WARMUP_S);
  const pids = Object.fromEntries(Object.entries(processes).map(([k, c]) => [k, c.proc.pid!]));
  const read = () => ({ ...Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)])), 'load generator': cpuMs(process.pid), machine: machineBusyMs() });
  const timesBefore = readCpuTimes();
  const before = read();
  const r = await load(`${frontUrl}${SLOTS_PATH}`, WINDOW_S);
  const after = read();
  const timesAfter = readCpuTimes();
  const steal = stealPct(timesBefore, timesAfter);
  measured.push({ before: timesBefore, after: timesAfter });
  if (r.non_2xx_or_errors > 0) failed.push(`${name}: ${r.non_2xx_or_errors} requests failed or answered other than 2xx`);
  const cpu = microsPerRequest(before, after, r.requests);
  log(`${name}: p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, ${r.requests_per_s} req/s; CPU µs per request ${JSON.stringify(cpu)}; ${stealText(steal)}`);
  return { ...r, cpu_us_per_request: cpu, steal_pct: steal };
}

runBench(log, async (failed) => {
  const loadBefore = loadavg();
  if (!existsSync(BODY_FILE)) throw new Error(`no Slots answer at ${BODY_FILE}: run tests-e2e/bench/system-slots.bench.ts first (it leaves the answer it measured there), or name a file in BENCH_SLOTS_BODY`);
  const body = readFileSync(BODY_FILE);
  const env = { INTERNAL_AUTH_KEYS: `floor:${randomBytes(32).toString('base64')}` };
  const children: Child[] = [];
  const start = async (name: string, args: string[], extraEnv: Record<string, string> = {}) => {
    const child = name === 'static-server.ts' ? startChild(path.join(ROOT, 'services/availability/bench/static-server.ts'), args, extraEnv) : bench(name, args, extraEnv);
    children.push(child);
    return { child, url: `http://127.0.0.1:${await listeningPort(child)}` };
  };
  try {
    log(`${body.length} B answer; three variants, ${CONNECTIONS} connections, ${WINDOW_S} s each`);
    const bare = await start('static-server.ts', [BODY_FILE]);
    const oneHop = await variant('one hop', { server: bare.child }, bare.url, body, failed);
    const proxy = await start('floor/two-hop-proxy.ts', [bare.url]);
    const twoHops = await variant('two hops', { server: bare.child, proxy: proxy.child }, proxy.url, body, failed);
    const verifying = await start('floor/verifying-server.ts', [BODY_FILE], env);
    const signing = await start('floor/two-hop-proxy.ts', [verifying.url, '--sign'], env);
    const withCredential = await variant('two hops with the internal credential', { server: verifying.child, proxy: signing.child }, signing.url, body, failed);
    writeFigures('slots-floor.json', {
      benchmark: 'slots-floor',
      machine: machineFacts(loadBefore, stealPctOver(measured)),
      scenario: { connections: CONNECTIONS, window_s: WINDOW_S, warmup_s: WARMUP_S, load_generator: 'autocannon, in the bench process' },
      response_bytes: body.length,
      one_hop: oneHop,
      two_hops: twoHops,
      two_hops_credential: withCredential,
      failed_checks: failed,
    });
  } finally {
    for (const c of children.reverse()) await c.stop();
  }
});
