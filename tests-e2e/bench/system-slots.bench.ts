/**
 * Issue 18, whole system: Slots through the gateway with the real calendar-sync reading the host's
 * Radicale calendar, the scenario of services/availability/bench/slots.bench.ts (fixture.ts: 31 dates,
 * 30-minute grid, Europe/Berlin host available 07:00–22:00, 500 calendar busy events, 1,000 Bookings).
 * Run: node --import tsx tests-e2e/bench/system-slots.bench.ts → .data/bench/system-slots.json
 *
 * Setup, all through the system's own doors: the 1,000 Bookings are made through the API (host available
 * all day meanwhile, so every fixture start is bookable) and written to Radicale by calendar-sync; then the
 * 500 busy events are PUT into the same calendar by CalDAV and the fixture's schedule is set. The run
 * waits until the Slots answer is exactly the one the fixture implies (computed here on its own: grid
 * starts inside the schedule that overlap no Booking and no busy event), i.e. until calendar-sync's
 * refresher has read the busy events.
 *
 * Measurement: autocannon, 50 connections, through the gateway for BENCH_SLOTS_WINDOW_S (default 65 s),
 * then the same against a bare Node HTTP server answering the same bytes (the physical limit, same run).
 * Cache expiries inside the window, as `npm start` configures the services (neither setting is set, so the
 * defaults): availability keeps a Slots answer SLOTS_CACHE_TTL_MS = 5 s (services/availability/src/config.ts),
 * calendar-sync's refresher looks at snapshots every REFRESH_INTERVAL_MS = 60 s and refreshes one older than
 * 54 s (services/calendar-sync/src/config.ts, jobs/busy-refresher.ts). The window starts a few seconds after
 * the refresher round that picked up the busy events, so 65 s holds the next round's refresh and 13 Slots
 * cache lifetimes. Both are counted, not assumed: the Slots answers availability computed in the window
 * (calendar-sync's busy requests, from its /metrics) and the snapshot refreshes (busy_snapshots.fetched_at,
 * polled every second).
 *
 * Figures: p50/p99/throughput, CPU per request for every process group on the machine (/proc), the
 * expiries, the bare-server baseline. Fails (exit 1) on any answer but 200 or an answer that is not the
 * expected one (before and after the window).
 *
 * The answer measured is left in .data/bench/system-slots-answer.json (ANSWER_FILE): slots-floor.bench.ts,
 * which `pnpm bench` runs next, measures two bare hops answering the same bytes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { toTimestamp } from '@sched/contracts';
import { icalTime, vcalendar, vevent } from '@sched/testing';
import { BENCH, makeFixture, type Fixture } from '../../services/availability/bench/fixture';
import { listeningPort, startChild, type Child } from '../../services/availability/bench/processes';
import { addDays, dateToWall, localDateOf, MINUTE_MS, wallToInstant } from '../../services/availability/src/domain/local-time';
import { ROOT, startSystem, type System } from '../support/system';
import { admin, setUpTenant, startReceiver, type Tenant } from '../support/tenant';
import { cpuPerUnit, createAll, machineFacts, progress, readCpuTimes, runBench, startCpuMeter, stealPct, stealText, systemEnv, untilAllSyncedAndDelivered, writeFigures } from './harness';

const CONNECTIONS = 50;
const WINDOW_S = Number(process.env.BENCH_SLOTS_WINDOW_S ?? 65);
const BASELINE_S = Number(process.env.BENCH_DURATION_S ?? 10);
const TARGET = { p50Ms: 5, p99Ms: 30 };
const log = progress('system-slots');
/** The Slots answer this run measured, byte for byte, for slots-floor.bench.ts. */
const ANSWER_FILE = path.join(ROOT, '.data', 'bench', 'system-slots-answer.json');

/** The Slots answer the fixture implies: grid starts inside the schedule's hours, overlapping no Booking and no busy event. */
function expectedStarts(fx: Fixture): number[] {
  const blocked = [...fx.bookings, ...fx.busy];
  const duration = BENCH.durationMinutes * MINUTE_MS;
  const starts: number[] = [];
  const { start: open, end: close } = fx.schedule.weekly.mon![0]!;
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  for (let d = 0; d < BENCH.dates; d++) {
    const date = addDays(fx.from, d);
    for (let m = minutes(open); m + BENCH.durationMinutes <= minutes(close); m += BENCH.gridMinutes) {
      const s = wallToInstant(BENCH.timezone, dateToWall(date) + m * MINUTE_MS);
      if (!blocked.some((b) => s < b.end && b.start < s + duration)) starts.push(s);
    }
  }
  return starts;
}

async function slotsAnswer(sys: System, t: Tenant, slotsPath: string): Promise<{ status: number; body: string; starts: number[] }> {
  const res = await fetch(`${sys.gatewayUrl}${slotsPath}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
  const body = await res.text();
  const starts = res.status === 200 ? (JSON.parse(body) as { data: Array<{ start_at: string }> }).data.map((s) => Date.parse(s.start_at)) : [];
  return { status: res.status, body, starts };
}

const sameStarts = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Requests calendar-sync's busy endpoint has answered so far (its /metrics): each is one Slots answer computed by availability. */
async function busyRequests(sys: System): Promise<number> {
  // The busy endpoint is calendar-sync's API process.
  const cs = sys.api('calendar-sync');
  const text = await (await fetch(`${cs.opsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('http_requests_total{') && l.includes('route="/internal/v1/workspaces/:ws/hosts/:host/busy"'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Polls the host's busy snapshot every second; the refreshes seen (fetched_at moved), and whether each was a full read (marker changed). */
function watchSnapshot(sys: System, workspaceId: string) {
  const seen: Array<{ at: number; fetchedAt: string; marker: string | null }> = [];
  let stopped = false;
  const poll = async () => {
    while (!stopped) {
      const { rows } = await sys.db.adminPool.query<{ fetched_at: string; change_marker: string | null }>(
        `SELECT fetched_at::text, change_marker FROM calendar_sync.busy_snapshots WHERE workspace_id = $1`,
        [workspaceId],
      );
      const row = rows[0];
      const last = seen[seen.length - 1];
      if (row && (!last || last.fetchedAt !== row.fetched_at)) seen.push({ at: Date.now(), fetchedAt: row.fetched_at, marker: row.change_marker });
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  const running = poll();
  return {
    async stop() {
      stopped = true;
      await running;
      const refreshes = seen.slice(1);
      return { refreshes: refreshes.length, full_reads: refreshes.filter((r, i) => r.marker !== seen[i]!.marker).length };
    },
  };
}

async function load(url: string, headers: Record<string, string>, duration: number) {
  const r = await autocannon({ url, connections: CONNECTIONS, duration, headers });
  return { p50_ms: r.latency.p50, p99_ms: r.latency.p99, requests_per_s: Math.round(r.requests.average), requests: r.requests.total, non_2xx_or_errors: r.non2xx + r.errors + r.timeouts };
}

async function main(failed: string[]): Promise<void> {
  const loadBefore = loadavg();
  const env = systemEnv();
  const ttlMs = Number(env.SLOTS_CACHE_TTL_MS ?? 5000);
  const refreshMs = Number(env.REFRESH_INTERVAL_MS ?? 60_000);
  const fx = makeFixture(addDays(localDateOf(BENCH.timezone, Date.now()), 1));
  // No answer of an earlier run may pass for this one's.
  rmSync(ANSWER_FILE, { force: true });
  const expected = expectedStarts(fx);
  log('starting the system (build, six services, Radicale)');
  const sys = await startSystem({ env });
  // The receiver answers at once; the seed Bookings' deliveries are all verified before the window (verifyPending below).
  const receiver = await startReceiver({ verify: 'after' });
  const scratch = mkdtempSync(path.join(tmpdir(), 'system-slots-'));
  let baselineServer: Child | undefined;
  try {
    const t = await setUpTenant(sys, receiver, { hostTimezone: BENCH.timezone });
    log(`${BENCH.bookings} Bookings through the API (host available all day meanwhile)`);
    await createAll(sys, t, t.eventTypeId, fx.bookings.map((b) => toTimestamp(new Date(b.start))), 8, 'seed');
    await untilAllSyncedAndDelivered(sys, t, receiver.received, { timeoutMs: 300_000, atLeast: BENCH.bookings });
    receiver.verifyPending();
    log(`${BENCH.busy} busy events PUT into the host's calendar by CalDAV; the fixture's schedule`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = next++; i < fx.busy.length; i = next++) {
          const b = fx.busy[i]!;
          await sys.radicale.putObject(t.calendarUser, t.calendarName, `busy-${i}.ics`, vcalendar(vevent({ UID: `bench-busy-${i}`, SUMMARY: 'Busy', DTSTART: icalTime(new Date(b.start)), DTEND: icalTime(new Date(b.end)) })));
        }
      }),
    );
    await admin(sys, 'PUT', `/admin/v1/workspaces/${t.workspaceId}/hosts/${t.hostId}/schedule`, fx.schedule);

    const slotsPath = `/v1/event-types/${t.eventTypeId}/slots?from=${fx.from}&to=${fx.to}&timezone=${encodeURIComponent(BENCH.timezone)}`;
    log(`waiting until the Slots answer holds the busy events (${expected.length} slots expected; calendar-sync reads them at its next refresher round)`);
    let answer = await slotsAnswer(sys, t, slotsPath);
    const waitUntil = Date.now() + 3 * refreshMs;
    while (!sameStarts(answer.starts, expected)) {
      if (Date.now() > waitUntil) throw new Error(`the Slots answer never became the expected one: ${answer.status}, ${answer.starts.length} slots, ${expected.length} expected`);
      await new Promise((r) => setTimeout(r, 1000));
      answer = await slotsAnswer(sys, t, slotsPath);
    }
    const file = path.join(scratch, 'slots.json');
    writeFileSync(file, answer.body);
    mkdirSync(path.dirname(ANSWER_FILE), { recursive: true });
    writeFileSync(ANSWER_FILE, answer.body);
    baselineServer = startChild(path.join(ROOT, 'services/availability/bench/static-server.ts'), [file], {});
    const baselineUrl = `http://127.0.0.1:${await listeningPort(baselineServer)}`;

    const auth = { authorization: `Bearer ${t.apiKey}` };
    log('warm-up 3 s');
    await load(`${sys.gatewayUrl}${slotsPath}`, auth, 3);
    log(`measuring through the gateway: ${CONNECTIONS} connections for ${WINDOW_S} s`);
    const snapshot = watchSnapshot(sys, t.workspaceId);
    const busyBefore = await busyRequests(sys);
    // The window is a measured phase: a delivery arriving in it (none is expected) waits.
    receiver.deferVerification();
    const meter = startCpuMeter(sys);
    const gateway = await load(`${sys.gatewayUrl}${slotsPath}`, auth, WINDOW_S);
    const { before, after } = meter.stop();
    receiver.verifyPending();
    const computed = (await busyRequests(sys)) - busyBefore;
    const refreshes = await snapshot.stop();
    const cpu = cpuPerUnit(before, after, gateway.requests);
    const steal = stealPct(before.times, after.times);
    log(`p50 ${gateway.p50_ms} ms, p99 ${gateway.p99_ms} ms, ${gateway.requests_per_s} req/s; ${computed} answers computed, ${refreshes.refreshes} snapshot refreshes in the window; ${stealText(steal)}`);
    const afterAnswer = await slotsAnswer(sys, t, slotsPath);

    log(`the physical limit: a bare Node HTTP server answering the same ${answer.body.length} bytes, ${BASELINE_S} s`);
    await load(baselineUrl, {}, 2);
    const bareBefore = readCpuTimes();
    const bare = { ...(await load(baselineUrl, {}, BASELINE_S)), steal_pct: stealPct(bareBefore, readCpuTimes()) };
    log(`bare server: ${bare.requests_per_s} req/s; ${stealText(bare.steal_pct)}`);

    const figures = {
      benchmark: 'system-slots',
      machine: machineFacts(loadBefore, steal),
      scenario: { dates: BENCH.dates, grid_minutes: BENCH.gridMinutes, busy_events: BENCH.busy, bookings: BENCH.bookings, connections: CONNECTIONS, window_s: WINDOW_S, system_env: env, background_cpu_nice: sys.backgroundNice },
      slots: expected.length,
      response_bytes: answer.body.length,
      gateway,
      cpu_ms_per_request: cpu,
      expiries_in_window: {
        slots_cache_ttl_ms: ttlMs,
        slots_cache_lifetimes: Math.floor((WINDOW_S * 1000) / ttlMs),
        slots_answers_computed: computed,
        snapshot_refresh_interval_ms: refreshMs,
        snapshot_refreshes: refreshes.refreshes,
        snapshot_full_reads: refreshes.full_reads,
      },
      static_baseline: bare,
      targets: { p50_ms: TARGET.p50Ms, p99_ms: TARGET.p99Ms },
      met: { p50: gateway.p50_ms <= TARGET.p50Ms, p99: gateway.p99_ms <= TARGET.p99Ms },
    };
    if (gateway.non_2xx_or_errors > 0) failed.push(`${gateway.non_2xx_or_errors} Slots requests answered other than 2xx or failed`);
    if (!sameStarts(afterAnswer.starts, expected)) failed.push(`after the window the Slots answer was ${afterAnswer.status} with ${afterAnswer.starts.length} slots, ${expected.length} expected`);
    if (bare.non_2xx_or_errors > 0) failed.push(`${bare.non_2xx_or_errors} baseline requests failed`);
    writeFigures('system-slots.json', { ...figures, failed_checks: failed });
  } finally {
    log('stopping the system');
    await baselineServer?.stop();
    // The system first: its webhook sender holds keep-alive connections to the receiver and keeps
    // sending its backlog; the receiver's close then verifies what is left (and throws on a bad one).
    try {
      await sys.stop();
    } finally {
      await receiver.close();
    }
    rmSync(scratch, { recursive: true, force: true });
  }
}

runBench(log, main);
