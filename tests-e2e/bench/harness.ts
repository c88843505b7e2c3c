/**
 * What the whole-system benchmarks in this folder share: progress lines, CPU time per process group on
 * the whole machine (from /proc), the load generator's requests, the Event Type and free slot starts
 * they book, waiting until every Booking is synced and announced, the figures file, and the exit code
 * that fails a run loudly when an answer was not what the benchmark expects.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { SERVICE_NAMES } from '@sched/db';
import { Pool } from 'undici';
import { send, waitFor, type Answer } from '@sched/testing';
import { percentile } from '../../services/availability/bench/fixture';
import { busyTicks, parseCpuTimes, type CpuTimes } from './proc-stat';
import { ROOT, type System } from '../support/system';
import { addAllDayHost, admin, connectRadicaleCalendar, type ReceivedWebhook, type Tenant } from '../support/tenant';

/** The arithmetic of the machine's CPU times (steal). */
export { stealPct, stealPctOver, type CpuTimes } from './proc-stat';
/** The load generator, shared with the service benches (libs/testing closed-loop.ts). */
export { runClosedLoop, send, type Answer, type LoadResult } from '@sched/testing';

/** `[bench <name>] <seconds since start> <msg>` on stderr: one line per phase. */
export function progress(name: string): (msg: string) => void {
  const t0 = Date.now();
  return (msg) => process.stderr.write(`[bench ${name}] +${((Date.now() - t0) / 1000).toFixed(0)}s ${msg}\n`);
}

/**
 * The environment the system runs with: what `npm start` gives every service (scripts/lib/start-system.mjs:
 * NODE_ENV development, every other setting at its default, LOG_LEVEL info; startSystem adds CPU_NICE of
 * the background services, BACKGROUND_CPU_NICE or 15), plus BENCH_SYSTEM_ENV ('{"NAME":"value"}') for
 * settings to try.
 */
export function systemEnv(): Record<string, string> {
  return { NODE_ENV: 'development', LOG_LEVEL: 'info', ...(process.env.BENCH_SYSTEM_ENV ? (JSON.parse(process.env.BENCH_SYSTEM_ENV) as Record<string, string>) : {}) };
}

export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
/** The p-th percentile (nearest rank) of unsorted samples; NaN for none. */
export const pct = (xs: number[], p: number) => (xs.length ? percentile(xs, p) : NaN);

/**
 * The machine's figures of a run: CPUs, load averages at its start and end, and `steal_pct`, the share of the
 * CPUs the host took away during the measured interval (proc-stat.ts stealPct / stealPctOver: this machine is
 * a VM, and the host's other guests make identical runs differ several times over).
 */
export function machineFacts(loadBefore: number[], stealPct: number) {
  return { cpus: cpus().length, loadavg_before: loadBefore.map((x) => round(x)), loadavg_after: loadavg().map((x) => round(x)), steal_pct: stealPct };
}

/** `CPU stolen by the host: 12.3 %` (a progress line's part). */
export const stealText = (pct: number) => `CPU stolen by the host: ${Number.isFinite(pct) ? pct : '?'} %`;

// ---------------------------------------------------------------------------------------------------
// CPU time from /proc

/** Linux clock ticks (USER_HZ) are 10 ms. */
const TICK_MS = 10;

/** CPU time (user + system) a process has used so far, in ms, from /proc; 0 when it is gone. */
export function cpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** The machine's CPU times so far (the `cpu` line of /proc/stat, in ticks): for stealPct and machineBusyMs. */
export function readCpuTimes(): CpuTimes {
  return parseCpuTimes(readFileSync('/proc/stat', 'utf8'));
}

/** CPU time the whole machine has spent so far on every CPU (all but idle and I/O wait, interrupts and steal included), in ms. */
export function machineBusyMs(times: CpuTimes = readCpuTimes()): number {
  return busyTicks(times) * TICK_MS;
}

/** The bench process itself: load generator, webhook receiver, polling. */
export const LOAD_GENERATOR = 'bench client + receiver';
/**
 * Our processes' groups: each service's API (or only process) under the service's name, its worker
 * (PROCESS_ROLE=worker, niced by `npm start`) as `<service>-worker`, so the tables show what ran on the
 * API path and what in the background.
 */
export const SERVICE_GROUPS: readonly string[] = SERVICE_NAMES.flatMap((s) => [s, `${s}-worker`]);
/** Process groups of the issue-18 CPU target: our six services (APIs and workers), Postgres and RabbitMQ (the calendar provider excluded). */
export const TARGET_GROUPS: readonly string[] = [...SERVICE_GROUPS, 'postgres', 'rabbitmq'];

export interface CpuSnapshot {
  atMs: number;
  machineMs: number;
  /** The machine's CPU times at the snapshot (machineMs is their busy part): stealPct between two snapshots. */
  times: CpuTimes;
  groups: Map<string, number>;
}

/** The group of a process: see machineCpu. */
function groupOf(pid: number, cmd: string, ours: Map<number, string>, radicaleDir: string, extra: Record<number, string>): string {
  if (pid === process.pid) return LOAD_GENERATOR;
  const known = ours.get(pid) ?? extra[pid];
  if (known) return known;
  if (cmd === '') return 'kernel threads';
  if (/pgbench/.test(cmd)) return 'pgbench';
  if (/postgres/.test(cmd)) return 'postgres';
  if (/beam|rabbitmq|epmd|erl_child_setup|inet_gethost/.test(cmd)) return 'rabbitmq';
  if (/radicale/.test(cmd) && cmd.includes(radicaleDir)) return 'radicale';
  return 'other';
}

function readCmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time per process group over an interval, sampled every `everyMs`: a process that ends inside the
 * interval still counts up to its last sample (a single before/after reading loses all of it, e.g. the
 * short-lived processes of other users of the machine). stop() returns the interval as two snapshots
 * for cpuPerUnit.
 */
export function startCpuMeter(sys: Pick<System, 'processes' | 'radicale'>, extra: Record<number, string> = {}, everyMs = 1000) {
  // By process name: a service's API under its name, its worker as `<service>-worker` (SERVICE_GROUPS).
  const ours = new Map<number, string>(sys.processes.filter((p) => p.child.pid).map((p) => [p.child.pid!, p.name]));
  /** pid → its group, CPU when first seen (0 for a process born inside the interval) and when last seen. */
  const procs = new Map<number, { group: string; first: number; last: number }>();
  const sample = (initial: boolean) => {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      const known = procs.get(pid);
      const ms = cpuMs(pid);
      if (known) {
        known.last = Math.max(known.last, ms);
        continue;
      }
      const cmd = readCmdline(pid);
      if (cmd === undefined) continue;
      procs.set(pid, { group: groupOf(pid, cmd, ours, sys.radicale.dataDir, extra), first: initial ? ms : 0, last: ms });
    }
  };
  const startTimes = readCpuTimes();
  const start: CpuSnapshot = { atMs: Date.now(), machineMs: machineBusyMs(startTimes), times: startTimes, groups: new Map() };
  sample(true);
  const timer = setInterval(() => sample(false), everyMs);
  return {
    stop(): { before: CpuSnapshot; after: CpuSnapshot } {
      clearInterval(timer);
      sample(false);
      const groups = new Map<string, number>();
      for (const p of procs.values()) groups.set(p.group, (groups.get(p.group) ?? 0) + Math.max(0, p.last - p.first));
      const times = readCpuTimes();
      return { before: start, after: { atMs: Date.now(), machineMs: machineBusyMs(times), times, groups } };
    },
  };
}

/**
 * CPU time so far of every process on the machine, by group: each of our services (by pid, so another
 * system on the machine is not counted as ours), Postgres backends, RabbitMQ (beam and its helpers), our
 * Radicale (by its data folder), pgbench, this process, kernel threads, and everything else ("other":
 * other users of the machine). Postgres and RabbitMQ are shared servers: other users' work on them counts.
 */
export function machineCpu(sys: Pick<System, 'processes'> & { radicale: Pick<System['radicale'], 'dataDir'> }, extra: Record<number, string> = {}): CpuSnapshot {
  const ours = new Map<number, string>(sys.processes.filter((p) => p.child.pid).map((p) => [p.child.pid!, p.name]));
  const groups = new Map<string, number>();
  const times = readCpuTimes();
  for (const entry of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    const pid = Number(entry);
    const cmd = readCmdline(pid);
    if (cmd === undefined) continue;
    const key = groupOf(pid, cmd, ours, sys.radicale.dataDir, extra);
    groups.set(key, (groups.get(key) ?? 0) + cpuMs(pid));
  }
  return { atMs: Date.now(), machineMs: machineBusyMs(times), times, groups };
}

export interface CpuPerUnit {
  /** CPU ms per unit (create, Booking, request) by process group, largest first; groups that used none left out. */
  by_group: Record<string, number>;
  /** Our six services, APIs and workers. */
  services: number;
  /** Our six services + Postgres + RabbitMQ: the sum the issue-18 target bounds (the calendar provider excluded). */
  services_postgres_rabbitmq: number;
  /** Every CPU of the machine (/proc/stat), whatever ran. */
  machine_total: number;
  /** machine_total minus the groups: what no sampled process accounts for (processes gone between samples, interrupts). */
  unattributed: number;
  /** How busy the machine's CPUs were over the interval, in % of all of them. */
  machine_busy_pct: number;
  units: number;
  interval_s: number;
}

/** CPU per unit between two snapshots, in ms (3 decimals: µs). */
export function cpuPerUnit(before: CpuSnapshot, after: CpuSnapshot, units: number): CpuPerUnit {
  const n = Math.max(units, 1);
  const spent = [...after.groups.entries()].map(([k, v]) => [k, Math.max(0, v - (before.groups.get(k) ?? 0))] as const);
  const sum = (keys: readonly string[]) => spent.filter(([k]) => keys.includes(k)).reduce((a, [, v]) => a + v, 0);
  const machine = after.machineMs - before.machineMs;
  const grouped = spent.reduce((a, [, v]) => a + v, 0);
  const intervalMs = Math.max(1, after.atMs - before.atMs);
  return {
    by_group: Object.fromEntries(
      spent
        .filter(([, v]) => v > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, round(v / n, 3)]),
    ),
    services: round(sum(SERVICE_GROUPS) / n, 3),
    services_postgres_rabbitmq: round(sum(TARGET_GROUPS) / n, 3),
    machine_total: round(machine / n, 3),
    unattributed: round(Math.max(0, machine - grouped) / n, 3),
    machine_busy_pct: round((100 * machine) / (intervalMs * cpus().length), 1),
    units,
    interval_s: round(intervalMs / 1000, 2),
  };
}

// ---------------------------------------------------------------------------------------------------
// Requests

// The load generator (send, runClosedLoop) is libs/testing's closed-loop.ts, shared with the service benches.

/** One keep-alive pool per origin, for the life of the process. */
const pools = new Map<string, Pool>();
function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 256 });
    pools.set(origin, pool);
  }
  return pool;
}

export function post(url: string, headers: Record<string, string>, payload: unknown): Promise<Answer> {
  const { origin, pathname, search } = new URL(url);
  return send(poolFor(origin), { method: 'POST', path: pathname + search, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(payload) }, true);
}

/** The body of one create: guest and metadata of a realistic size (as the booking bench sends). */
export function createBody(eventTypeId: string, startAt: string, i: number) {
  return { event_type_id: eventTypeId, start_at: startAt, guest: { name: `Guest ${i}`, email: `g${i}@example.com`, timezone: 'Europe/London' }, metadata: { order: `o-${i}`, channel: 'bench' } };
}

/** The headers of one create through the gateway: the tenant's key and an Idempotency-Key of its own. */
export function createHeaders(t: Tenant, key: string): Record<string, string> {
  return { authorization: `Bearer ${t.apiKey}`, 'idempotency-key': key };
}

/**
 * Creates a Booking on each start, `concurrency` at a time, through the gateway; any answer but 201 fails.
 * Resolves with the Booking ids in order.
 */
export async function createAll(sys: System, t: Tenant, eventTypeId: string, starts: string[], concurrency: number, keyPrefix: string): Promise<string[]> {
  const ids: string[] = new Array<string>(starts.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < starts.length; i = next++) {
      const { status, body } = await post(`${sys.gatewayUrl}/v1/bookings`, createHeaders(t, `${keyPrefix}-${i}`), createBody(eventTypeId, starts[i]!, i));
      if (status !== 201) throw new Error(`create on ${starts[i]} answered ${status}: ${body.slice(0, 300)}`);
      ids[i] = (JSON.parse(body) as { data: { id: string } }).data.id;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}

/**
 * An Event Type of `minutes` on the tenant's host (all day, every day, UTC), bookable from now to
 * `advanceDays` ahead; waits until it is bookable.
 */
export async function createEventType(sys: System, t: Tenant, opts: { slug: string; minutes: number; advanceDays: number; hostId?: string }): Promise<string> {
  const evt = await admin(sys, 'POST', `/admin/v1/workspaces/${t.workspaceId}/event-types`, {
    host_id: opts.hostId ?? t.hostId,
    name: `Bench ${opts.slug}`,
    slug: opts.slug,
    duration_minutes: opts.minutes,
    meeting_type: 'phone',
    maximum_advance_minutes: opts.advanceDays * 1440,
  });
  await waitFor(async () => (await t.client.eventTypes.get(evt.id)).bookable, { timeoutMs: 20000, intervalMs: 200 });
  return evt.id as string;
}

/**
 * One more host of the tenant's workspace, as setUpTenant makes its first: available all day, every day
 * (UTC), with a Radicale calendar of its own (user demo). Resolves with the host id and its calendar name.
 */
export async function addCalDavHost(sys: System, t: Tenant, n: number): Promise<{ hostId: string; calendarName: string }> {
  const hostId = await addAllDayHost(sys, t.workspaceId, { name: `Host ${n}`, email: `host${n}@example.com`, timezone: 'UTC', conferencing_url_template: 'https://meet.example.com/{booking_id}' });
  const calendarName = `${t.calendarName}-h${n}`;
  await connectRadicaleCalendar(sys, t.workspaceId, hostId, calendarName);
  return { hostId, calendarName };
}

const utcDate = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/** Every free start of an Event Type from tomorrow to `lastDay` days ahead (UTC dates), as the Slots API answers them. */
export async function freeStarts(t: Tenant, eventTypeId: string, lastDay: number): Promise<string[]> {
  const starts: string[] = [];
  // At most 62 dates per query (decisions.md §8).
  for (let first = 1; first <= lastDay; first += 62) {
    const slots = await t.client.eventTypes.slots(eventTypeId, { from: utcDate(first), to: utcDate(Math.min(lastDay, first + 61)), timezone: 'UTC' });
    starts.push(...slots.map((s) => s.start_at));
  }
  return starts;
}

// ---------------------------------------------------------------------------------------------------
// Background work done

/** The booking.created deliveries seen so far, by Booking id (first delivery time), kept up to date incrementally. */
export function deliveredCreates(received: ReceivedWebhook[]): () => Map<string, number> {
  const seen = new Map<string, number>();
  let read = 0;
  return () => {
    for (; read < received.length; read++) {
      const w = received[read]!;
      if (w.type === 'booking.created' && w.bookingId && !seen.has(w.bookingId)) seen.set(w.bookingId, w.at);
    }
    return seen;
  };
}

/** How many Bookings of the workspace have calendar.status synced, are not synced yet, or failed to sync. */
export async function calendarStates(sys: System, workspaceId: string): Promise<{ all: number; synced: number; failed: number }> {
  const { rows } = await sys.db.adminPool.query<{ all: number; synced: number; failed: number }>(
    `SELECT count(*)::int AS all, count(*) FILTER (WHERE calendar_status = 'synced')::int AS synced,
            count(*) FILTER (WHERE calendar_status NOT IN ('synced', 'pending'))::int AS failed
       FROM booking.bookings WHERE workspace_id = $1`,
    [workspaceId],
  );
  return rows[0]!;
}

/**
 * Waits until every Booking of the workspace has calendar.status synced (calendar-sync wrote its event and
 * booking heard so) and its booking.created webhook reached the receiver; fails at once when one failed to
 * sync. Resolves with when that was first seen (checked every `intervalMs`). `atLeast`, when given, is how
 * many Bookings the workspace is known to hold (e.g. warm-up + the 201s): the database is asked only once
 * that many booking.created deliveries arrived, so the wait does not poll the system it measures for
 * nothing (a Booking that failed to sync is then reported when its webhook is in, not before).
 */
export async function untilAllSyncedAndDelivered(
  sys: System,
  t: Tenant,
  received: ReceivedWebhook[],
  opts: { timeoutMs: number; intervalMs?: number; atLeast?: number },
): Promise<number> {
  const delivered = deliveredCreates(received);
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const now = Date.now();
    if (delivered().size >= (opts.atLeast ?? 0)) {
      const states = await calendarStates(sys, t.workspaceId);
      if (states.failed > 0) throw new Error(`${states.failed} Bookings failed to sync to the calendar`);
      const seen = Date.now();
      if (states.synced === states.all && delivered().size >= states.all) return seen;
      if (seen > deadline) throw new Error(`after ${opts.timeoutMs} ms: ${states.synced} of ${states.all} Bookings synced, ${delivered().size} booking.created delivered`);
    } else if (now > deadline) {
      throw new Error(`after ${opts.timeoutMs} ms: ${delivered().size} booking.created delivered of at least ${opts.atLeast} Bookings`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}

// ---------------------------------------------------------------------------------------------------
// Figures and failures

/** Writes .data/bench/<file> and prints the figures as the last line of stdout. */
export function writeFigures(file: string, figures: object): void {
  const out = path.join(ROOT, '.data', 'bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, file), `${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

/**
 * Runs a benchmark: exit 0 when it finished and every check held; 1 when it threw or a check failed (the
 * figures are written first, with the failed checks in `failed_checks`, so the report can show them).
 */
export function runBench(log: (msg: string) => void, main: (failed: string[]) => Promise<void>): void {
  const failed: string[] = [];
  main(failed).then(
    () => {
      if (failed.length === 0) {
        log('done');
        process.exit(0);
      }
      for (const f of failed) log(`FAILED CHECK: ${f}`);
      process.exit(1);
    },
    (err: unknown) => {
      log(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(1);
    },
  );
}
