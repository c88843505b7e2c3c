/**
 * Issue 18, whole system: creates at a fixed rate, then every Booking followed until calendar-sync wrote
 * its event to Radicale (calendar.status synced) and its booking.created webhook reached the receiver.
 * Run: node --import tsx tests-e2e/bench/system-sustained.bench.ts → .data/bench/system-sustained.json
 *
 * The system runs as `npm start` runs it (see system-create-burst.bench.ts). Creates are sent on a fixed
 * schedule (open loop) at BENCH_RATE per second (default 150) for BENCH_DURATION_S (default 10), each on
 * a distinct free start with its own Idempotency-Key; a short warm-up first, let finish before.
 *
 * BENCH_HOSTS (default 1) spreads the creates round-robin over that many hosts of the workspace, each with
 * its own Radicale calendar: Radicale checks every object of a calendar on each new PUT (docs/performance.md),
 * so one calendar measures Radicale's limit as much as ours. With BENCH_HOSTS > 1 the figures go to
 * system-sustained-spread.json instead.
 *
 * Figures: Bookings created, the time from the first create until the last Booking was synced and
 * delivered, the sustained rate = created / that time, and CPU per Booking over that same interval (its
 * create, events, calendar write and webhooks) per process group on the machine, with the sum across our
 * six services + Postgres + RabbitMQ (the issue's target; Radicale, the calendar provider, is left out of
 * it) and the machine total. Fails (exit 1) on any answer but 201, a Booking that failed to sync, not
 * everything done within BENCH_SETTLE_TIMEOUT_S (default 300), or fewer events in the calendar than Bookings.
 */
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { startSystem } from '../support/system';
import { setUpTenant, startReceiver } from '../support/tenant';
import {
  addCalDavHost,
  calendarStates,
  createAll,
  createBody,
  createEventType,
  createHeaders,
  cpuPerUnit,
  deliveredCreates,
  freeStarts,
  machineFacts,
  pct,
  progress,
  round,
  runBench,
  send,
  startCpuMeter,
  stealPct,
  stealText,
  systemEnv,
  untilAllSyncedAndDelivered,
  writeFigures,
} from './harness';

const RATE_PER_S = Number(process.env.BENCH_RATE ?? 150);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const SETTLE_TIMEOUT_S = Number(process.env.BENCH_SETTLE_TIMEOUT_S ?? 300);
const HOSTS = Math.max(1, Number(process.env.BENCH_HOSTS ?? 1));
const NAME = HOSTS > 1 ? 'system-sustained-spread' : 'system-sustained';
const WARMUP_CREATES = 64;
const TARGET = { sustainedPerS: 150, cpuMsPerBooking: 8 };
const log = progress(NAME);

async function main(failed: string[]): Promise<void> {
  const loadBefore = loadavg();
  log('starting the system (build, six services, Radicale)');
  const env = systemEnv();
  const sys = await startSystem({ env });
  // The receiver answers at once and verifies every delivery after the measured interval (verifyPending below).
  const receiver = await startReceiver({ verify: 'after' });
  try {
    log('setting up the tenant and a 5-minute Event Type');
    const t = await setUpTenant(sys, receiver);
    const evt = await createEventType(sys, t, { slug: 'sustained', minutes: 5, advanceDays: 62 });
    const total = Math.round(RATE_PER_S * DURATION_S);
    const pool = await freeStarts(t, evt, 60);
    if (pool.length < WARMUP_CREATES + total) throw new Error(`only ${pool.length} free starts for ${WARMUP_CREATES + total} creates`);
    // Host 0 is the tenant's; the others get a calendar and a 5-minute Event Type each.
    const hosts = [{ evt, pool, calendarName: t.calendarName }];
    for (let n = 1; n < HOSTS; n++) {
      const extra = await addCalDavHost(sys, t, n);
      const hostEvt = await createEventType(sys, t, { slug: `sustained-h${n}`, minutes: 5, advanceDays: 62, hostId: extra.hostId });
      hosts.push({ evt: hostEvt, pool: await freeStarts(t, hostEvt, 60), calendarName: extra.calendarName });
    }
    if (HOSTS > 1) log(`${HOSTS} hosts, each with its own Radicale calendar; creates go round-robin`);
    log(`warm-up: ${WARMUP_CREATES} creates, then their calendar writes and webhooks`);
    await createAll(sys, t, evt, pool.slice(0, WARMUP_CREATES), 4, 'warmup');
    await untilAllSyncedAndDelivered(sys, t, receiver.received, { timeoutMs: 120_000 });
    receiver.verifyPending();

    // Every create built before the run starts: the load generator's own CPU stays off the machine it measures.
    const requests = Array.from({ length: total }, (_, k) => {
      const i = WARMUP_CREATES + k;
      const host = hosts[k % HOSTS]!;
      const start = host.pool[HOSTS === 1 ? i : WARMUP_CREATES + Math.floor(k / HOSTS)]!;
      return { method: 'POST' as const, path: '/v1/bookings', headers: { 'content-type': 'application/json', ...createHeaders(t, `sustained-${i}`) }, body: JSON.stringify(createBody(host.evt, start, i)) };
    });
    const gateway = new Pool(sys.gatewayUrl, { connections: 256 });
    log(`${total} creates at ${RATE_PER_S}/s`);
    const createdAt = new Map<string, number>();
    const statuses: Record<string, number> = {};
    const createMs: number[] = [];
    // The run is a measured phase: deliveries wait again until the verifyPending after it.
    receiver.deferVerification();
    const meter = startCpuMeter(sys);
    const started = Date.now();
    const inflight: Promise<void>[] = [];
    let lastSent = started;
    for (let k = 0; k < total; k++) {
      const due = started + (k * 1000) / RATE_PER_S;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const sentAt = Date.now();
      lastSent = sentAt;
      inflight.push(
        send(gateway, requests[k]!, true).then(({ status, body }) => {
          const at = Date.now();
          createMs.push(at - sentAt);
          if (status === 201) createdAt.set((JSON.parse(body) as { data: { id: string } }).data.id, at);
          else statuses[status] = (statuses[status] ?? 0) + 1;
        }),
      );
    }
    await Promise.all(inflight);
    await gateway.close();
    const answeredAt = Date.now();
    log(`${createdAt.size} created; waiting until every Booking is synced to the calendar and its webhook delivered`);
    const doneAt = await untilAllSyncedAndDelivered(sys, t, receiver.received, { timeoutMs: SETTLE_TIMEOUT_S * 1000, intervalMs: 100, atLeast: WARMUP_CREATES + createdAt.size });
    const { before, after } = meter.stop();
    const verified = receiver.verifyPending();
    log(`${verified} webhook deliveries of the run verified (all ${receiver.received.length} received so far are)`);
    // Every Booking the run stored counts, also one whose create timed out at the gateway after booking
    // had committed it: each has its calendar write and events.
    const stored = (await calendarStates(sys, t.workspaceId)).all - WARMUP_CREATES;
    const cpu = cpuPerUnit(before, after, stored);
    const steal = stealPct(before.times, after.times);
    const elapsedS = (doneAt - started) / 1000;
    log(`all synced and delivered ${round((doneAt - answeredAt) / 1000, 1)} s after the last answer: ${round(stored / elapsedS, 1)} Bookings/s; ${stealText(steal)}`);

    // Per Booking: 201 → calendar.status synced (booking's own calendar_written_at) and 201 → webhook received.
    const { rows } = await sys.db.adminPool.query<{ id: string; written: number }>(
      `SELECT id, extract(epoch FROM calendar_written_at) * 1000 AS written FROM booking.bookings WHERE id = ANY($1)`,
      [[...createdAt.keys()]],
    );
    const delivered = deliveredCreates(receiver.received)();
    const syncedLag = rows.map((r) => Number(r.written) - createdAt.get(r.id)!);
    const webhookLag = [...createdAt.entries()].map(([id, at]) => delivered.get(id)! - at);
    let events = 0;
    for (const h of hosts) events += (await sys.radicale.listObjects(t.calendarUser, h.calendarName)).length;
    const sustained = stored / elapsedS;
    const figures = {
      benchmark: NAME,
      machine: machineFacts(loadBefore, steal),
      scenario: { rate_per_s: RATE_PER_S, duration_s: DURATION_S, creates: total, warmup_creates: WARMUP_CREATES, event_type: '5 minutes, host available all day (UTC)', hosts: HOSTS, system_env: env, background_cpu_nice: sys.backgroundNice },
      created: createdAt.size,
      non_201: statuses,
      bookings_stored: stored,
      // The load generator's own pace: on a loaded machine it may send slower than asked.
      sent_per_s: round((total - 1) / Math.max(0.001, (lastSent - started) / 1000), 1),
      create_p50_ms: pct(createMs, 50),
      create_p99_ms: pct(createMs, 99),
      all_synced_and_delivered_s: round(elapsedS, 1),
      after_last_answer_s: round((doneAt - answeredAt) / 1000, 1),
      sustained_per_s: round(sustained, 1),
      synced_lag_ms: { p50: pct(syncedLag, 50), p99: pct(syncedLag, 99), max: Math.max(...syncedLag) },
      webhook_lag_ms: { p50: pct(webhookLag, 50), p99: pct(webhookLag, 99), max: Math.max(...webhookLag) },
      calendar_events: events,
      cpu_ms_per_booking: cpu,
      targets: { sustained_per_s_min: TARGET.sustainedPerS, cpu_ms_per_booking_max: TARGET.cpuMsPerBooking },
      met: { sustained: sustained >= TARGET.sustainedPerS, cpu: cpu.services_postgres_rabbitmq <= TARGET.cpuMsPerBooking },
    };
    const nonCreated = Object.entries(statuses);
    if (nonCreated.length > 0) failed.push(`answers other than 201: ${nonCreated.map(([s, n]) => `${n}× ${s}`).join(', ')}`);
    if (events < WARMUP_CREATES + stored) failed.push(`${events} events in the calendar for ${WARMUP_CREATES + stored} Bookings`);
    writeFigures(`${NAME}.json`, { ...figures, failed_checks: failed });
  } finally {
    log('stopping the system');
    // The system first: its webhook sender holds keep-alive connections to the receiver and keeps
    // sending its backlog; the receiver's close then verifies what is left (and throws on a bad one).
    try {
      await sys.stop();
    } finally {
      await receiver.close();
    }
  }
}

runBench(log, main);
