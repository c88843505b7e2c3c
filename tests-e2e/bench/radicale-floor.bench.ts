/**
 * Issue 18, the physical limit under the sustained figures: how many Booking events Radicale alone
 * takes per second on this machine, with no service of ours running. No system can sync more Bookings
 * per second to this calendar provider here.
 * Run: node --import tsx tests-e2e/bench/radicale-floor.bench.ts → .data/bench/radicale-floor.json
 *
 * What one Booking's calendar write sends to Radicale (services/calendar-sync: sync-booking.ts,
 * providers/caldav/caldav-provider.ts putEvent): one PUT of the event with `If-None-Match: *` and
 * `content-type: text/calendar; charset=utf-8` (tsdav createCalendarObject), nothing before it (no
 * probe, no discovery: the connection's calendar URL is stored) and nothing after it; only a second
 * write of the same object (412) adds a PUT. So that one PUT is the sequence replayed here. The body is
 * the one calendar-sync sends (ical-write.ts toICalendar of booking-event.ts bookingEvent), for
 * Bookings as the sustained bench makes them (5-minute phone meetings, guest "Guest <i>").
 *
 * Each scenario starts a fresh Radicale as the system harness does (libs/testing startRadicale: the
 * same config, htpasswd user, filesystem storage in a folder of its own) but at nice 0 and alone, makes
 * the calendars, PUTs the warm-up events into the first one (the sustained bench's 64 warm-up
 * Bookings), then BENCH_RADICALE_PUTS (1,500) new events round-robin over the calendars, with
 * BENCH_RADICALE_WRITERS concurrent writers (default 4, calendar-sync's prefetch), each as fast as
 * Radicale answers: one calendar (system-sustained) and ten (system-sustained-spread). The client is
 * node:http with a keep-alive agent (calendar-sync's got runs on it); Radicale closes the connection
 * after each answer, so the connections opened are counted rather than assumed.
 *
 * Figures per scenario: PUTs/s, Radicale CPU per PUT (its process from /proc: every thread, those that
 * ended included), the client's CPU per PUT (this process), Radicale's CPU in % of one core over 1 s
 * windows (mean and highest: Python's GIL keeps it at or under about 100 %) and the most threads seen,
 * the first 100 PUTs against the last 100 (Radicale CPU per PUT and p50 latency: its cost grows with
 * the calendar), connections per PUT, the machine's busy %, and the one-core ceiling: 1000 ms over
 * Radicale's CPU per PUT, the PUTs/s it would take with a whole core to itself (on a shared machine
 * the rate reached is lower, by what the other processes took of the cores). Fails (exit 1) on any answer but 201 or
 * when the calendars do not hold every event at the end.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { makeBooking, startRadicale, type TestRadicale } from '@sched/testing';
import { bookingEvent } from '../../services/calendar-sync/src/domain/booking-event';
import { toICalendar } from '../../services/calendar-sync/src/providers/caldav/ical-write';
import { coreUse, costOfSlice, p50p99, type CpuSample } from './floor-stats';
import { cpuMs, machineBusyMs, machineFacts, progress, readCpuTimes, round, runBench, stealPct, stealPctOver, stealText, writeFigures, type CpuTimes } from './harness';

const PUTS = Number(process.env.BENCH_RADICALE_PUTS ?? 1500);
const WRITERS = Number(process.env.BENCH_RADICALE_WRITERS ?? 4);
/** The sustained bench's warm-up creates, whose events are in the first calendar before the run. */
const WARMUP = 64;
/** The first and last slice compared. */
const SLICE = 100;
const SCENARIOS = [
  { name: 'one_calendar', calendars: 1, bounds: 'system-sustained' },
  { name: 'ten_calendars', calendars: 10, bounds: 'system-sustained-spread' },
] as const;
const USER = 'demo';
const log = progress('radicale-floor');

/** TCP connections the client opened. */
let connects = 0;

/** The event body calendar-sync PUTs for the i-th Booking of a run (a 5-minute phone meeting). */
function eventOf(i: number, now: Date): { name: string; ics: string } {
  const start = new Date(Date.UTC(2030, 0, 1) + i * 5 * 60_000);
  const booking = makeBooking({
    start_at: start.toISOString(),
    end_at: new Date(start.getTime() + 5 * 60_000).toISOString(),
    guest: { name: `Guest ${i}`, email: `g${i}@example.com`, timezone: 'Europe/London' },
    meeting: { type: 'phone', join_url: null },
    metadata: { order: `o-${i}`, channel: 'bench' },
  });
  const event = bookingEvent(booking, null);
  return { name: event.objectName, ics: toICalendar(event, now) };
}

/** The sockets the client has used; a PUT on a socket not seen before opened a TCP connection. */
const socketsSeen = new WeakSet<Socket>();

/**
 * One PUT as tsdav's createCalendarObject sends it, on node:http (under got, calendar-sync's transport)
 * with a keep-alive agent: the answer is read as it arrives. Resolves with the status; rejects on a
 * transport failure. (Not undici: 7.30 ends the process when a server closes the connection right after
 * an answer, as Radicale does, nodejs/undici#5360, fixed after 7.30.)
 */
function put(agent: http.Agent, req: { url: URL; authorization: string; body: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = http.request(
      req.url,
      { method: 'PUT', agent, headers: { authorization: req.authorization, 'content-type': 'text/calendar; charset=utf-8', 'if-none-match': '*', 'content-length': Buffer.byteLength(req.body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    r.on('socket', (socket) => {
      if (socketsSeen.has(socket)) return;
      socketsSeen.add(socket);
      connects += 1;
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

/** Threads Radicale has now (the process's tasks). */
function threadCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}

async function scenario(calendars: number, failed: string[]) {
  const radicale: TestRadicale = await startRadicale({ users: { [USER]: 'demo-password' }, nice: 0 });
  const pid = radicale.pid()!;
  // A process that ends on an uncaught error runs no finally: Radicale must not outlive it.
  const killOnExit = () => {
    if (radicale.isRunning()) process.kill(pid, 'SIGKILL');
    rmSync(radicale.dataDir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS });
  const authorization = `Basic ${Buffer.from(`${USER}:demo-password`).toString('base64')}`;
  try {
    const names = Array.from({ length: calendars }, (_, c) => `floor-${c}`);
    for (const name of names) await radicale.makeCalendar(USER, name);
    const paths = names.map((name) => new URL(radicale.calendarUrl(USER, name)).pathname);
    const statuses: Record<string, number> = {};
    // The bodies are made before the run, so the client's CPU per PUT is the request alone.
    const bodies = Array.from({ length: WARMUP + PUTS }, (_, i) => eventOf(i, new Date()));
    const putEvent = async (calendar: number, i: number) => {
      const { name, ics } = bodies[i]!;
      const status = await put(agent, { url: new URL(`${paths[calendar]!}${encodeURIComponent(name)}`, radicale.url), authorization, body: ics });
      if (status !== 201) statuses[status] = (statuses[status] ?? 0) + 1;
    };

    // The warm-up Bookings' events, in the first calendar, as the sustained bench leaves them.
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        for (let i = next++; i < WARMUP; i = next++) await putEvent(0, i);
      }),
    );

    const samples: CpuSample[] = [];
    let maxThreads = 0;
    const sample = () => {
      samples.push({ atMs: Date.now(), cpuMs: cpuMs(pid) });
      maxThreads = Math.max(maxThreads, threadCount(pid));
    };
    // Radicale's CPU (and that of this process) when k of the run's PUTs had completed.
    const radicaleAtDone: number[] = [];
    const latencies: number[] = new Array<number>(PUTS);
    const doneOrder: number[] = [];
    const connectsBefore = connects;
    const beforeTimes = readCpuTimes();
    const before = { self: cpuMs(process.pid), machine: machineBusyMs(beforeTimes), at: Date.now(), times: beforeTimes };
    radicaleAtDone.push(cpuMs(pid));
    sample();
    const sampler = setInterval(sample, 250);
    next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        for (let k = next++; k < PUTS; k = next++) {
          const sentAt = Date.now();
          await putEvent(k % calendars, WARMUP + k);
          latencies[k] = Date.now() - sentAt;
          doneOrder.push(k);
          radicaleAtDone.push(cpuMs(pid));
        }
      }),
    );
    clearInterval(sampler);
    sample();
    const afterTimes = readCpuTimes();
    const after = { self: cpuMs(process.pid), machine: machineBusyMs(afterTimes), at: Date.now(), times: afterTimes };
    const elapsedS = (after.at - before.at) / 1000;
    const radicaleMs = radicaleAtDone[PUTS]! - radicaleAtDone[0]!;

    let events = 0;
    for (const name of names) events += (await radicale.listObjects(USER, name)).length;
    const non201 = Object.entries(statuses);
    if (non201.length > 0) failed.push(`${calendars} calendar(s): answers other than 201: ${non201.map(([s, k]) => `${k}× ${s}`).join(', ')}`);
    if (events !== WARMUP + PUTS) failed.push(`${calendars} calendar(s): ${events} events in the calendars, ${WARMUP + PUTS} PUT`);

    const slice = (from: number, to: number) => ({
      radicale_cpu_ms_per_put: round(costOfSlice(radicaleAtDone, from, to), 2),
      latency: p50p99(doneOrder.slice(from, to).map((k) => latencies[k]!)),
    });
    const use = coreUse(samples, 1000);
    return {
      calendars,
      warmup_events_in_first_calendar: WARMUP,
      puts: PUTS,
      writers: WRITERS,
      events_per_calendar_at_end: Math.round((WARMUP + PUTS) / calendars),
      event_bytes: Buffer.byteLength(bodies[WARMUP]!.ics),
      puts_per_s: round(PUTS / elapsedS, 1),
      elapsed_s: round(elapsedS, 1),
      radicale_cpu_ms_per_put: round(radicaleMs / PUTS, 2),
      // Radicale runs on one core (the GIL): the most PUTs/s it could take with a whole core to itself,
      // over the run and at the calendar size of its end (the last 100 PUTs' cost).
      one_core_ceiling_puts_per_s: round(1000 / Math.max(0.01, radicaleMs / PUTS), 1),
      one_core_ceiling_at_end_puts_per_s: round(1000 / Math.max(0.01, costOfSlice(radicaleAtDone, PUTS - SLICE, PUTS)), 1),
      client_cpu_ms_per_put: round((after.self - before.self) / PUTS, 3),
      radicale_core_pct: use,
      radicale_max_threads: maxThreads,
      machine_busy_pct: round((100 * (after.machine - before.machine)) / ((after.at - before.at) * cpus().length), 1),
      steal_pct: stealPct(before.times, after.times),
      first_100: slice(0, SLICE),
      last_100: slice(PUTS - SLICE, PUTS),
      latency: p50p99(latencies),
      connections_opened_per_put: round((connects - connectsBefore) / PUTS, 2),
      non_201: statuses,
      calendar_events_at_end: events,
      /** The machine's CPU times at the run's start and end (for the steal over both scenarios; not written). */
      measured: { before: before.times, after: after.times },
    };
  } finally {
    agent.destroy();
    await radicale.close();
    process.off('exit', killOnExit);
  }
}

runBench(log, async (failed) => {
  const loadBefore = loadavg();
  const results: Record<string, Omit<Awaited<ReturnType<typeof scenario>>, 'measured'> & { bounds: string }> = {};
  const measured: Array<{ before: CpuTimes; after: CpuTimes }> = [];
  for (const s of SCENARIOS) {
    log(`${s.calendars} calendar(s): a fresh Radicale (nice 0), ${WARMUP} warm-up events, then ${PUTS} PUTs, ${WRITERS} writers`);
    const { measured: interval, ...r } = await scenario(s.calendars, failed);
    measured.push(interval);
    log(`${s.calendars} calendar(s): ${r.puts_per_s} PUTs/s, Radicale ${r.radicale_cpu_ms_per_put} ms CPU per PUT (first 100: ${r.first_100.radicale_cpu_ms_per_put}, last 100: ${r.last_100.radicale_cpu_ms_per_put}), at most ${r.radicale_core_pct?.max_pct} % of a core; ${stealText(r.steal_pct)}`);
    results[s.name] = { ...r, bounds: s.bounds };
  }
  writeFigures('radicale-floor.json', {
    benchmark: 'radicale-floor',
    machine: machineFacts(loadBefore, stealPctOver(measured)),
    radicale_version: radicaleVersion(),
    requests_per_booking: 'one PUT (If-None-Match: *), as calendar-sync writes a new Booking',
    ...results,
    failed_checks: failed,
  });
});

function radicaleVersion(): string {
  try {
    return execFileSync('radicale', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
