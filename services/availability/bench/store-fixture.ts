/**
 * The Postgres side the store benches share (slot-checks.bench.ts, slot-check-store.bench.ts): a test
 * database holding a host with its schedule, a connected calendar and one Event Type, written straight into
 * availability's tables; a pool of one connection that counts the statements sent; the CPU time of that connection's backend.
 * Nothing here imports the service's src/ (slot-checks.bench.ts may load another tree's, BENCH_SRC).
 */
import { readFileSync } from 'node:fs';
import type { Pool, PoolClient } from 'pg';
import { newId } from '@sched/contracts';
import { createPool } from '@sched/db';
import { createTestDatabase, type TestDatabase } from '@sched/testing';

const CLOCK_TICK_US = 1e6 / 100; // USER_HZ

export interface HostSpec {
  timezone: string;
  /** The same working hours every day of the week, local time. */
  hours: { start: string; end: string };
  eventType: { name: string; slug: string; durationMinutes: number; slotIntervalMinutes: number; bufferBeforeMinutes: number; bufferAfterMinutes: number; maximumAdvanceMinutes: number; meetingType: string };
}

export interface HostIds {
  ws: string;
  hostId: string;
  eventTypeId: string;
}

/**
 * A fresh test database with availability's schema holding one host (new ids; named Ada) with its weekly
 * schedule (no overrides), its calendar connected and an active public Event Type with no minimum notice;
 * then `bookings` writes the bench's own booked intervals, and the table is ANALYZEd. Dropped again if
 * seeding fails.
 */
export async function databaseWithHost(spec: HostSpec, bookings: (admin: Pool, ids: HostIds) => Promise<void>): Promise<HostIds & { tdb: TestDatabase }> {
  const tdb = await createTestDatabase({ services: ['availability'] });
  const ids = { ws: newId('wsp'), hostId: newId('hst'), eventTypeId: newId('evt') };
  try {
    await seedHost(tdb.adminPool, ids, spec);
    await bookings(tdb.adminPool, ids);
    await tdb.adminPool.query('ANALYZE availability.booked_intervals');
  } catch (err) {
    await tdb.drop();
    throw err;
  }
  return { tdb, ...ids };
}

async function seedHost(admin: Pool, { ws, hostId, eventTypeId }: HostIds, spec: HostSpec): Promise<void> {
  const weekly = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [spec.hours]]));
  await admin.query(`INSERT INTO availability.hosts (id, workspace_id, name, email, timezone) VALUES ($1, $2, 'Ada', 'ada@example.com', $3)`, [hostId, ws, spec.timezone]);
  await admin.query(`INSERT INTO availability.schedules (host_id, workspace_id, weekly, overrides, has_availability) VALUES ($1, $2, $3, '[]', true)`, [hostId, ws, JSON.stringify(weekly)]);
  await admin.query(`INSERT INTO availability.calendar_connections (host_id, workspace_id, status, event_at) VALUES ($1, $2, 'connected', now())`, [hostId, ws]);
  const e = spec.eventType;
  await admin.query(
    `INSERT INTO availability.event_types (id, workspace_id, host_id, name, slug, duration_minutes, slot_interval_minutes, buffer_before_minutes, buffer_after_minutes,
       minimum_notice_minutes, maximum_advance_minutes, meeting_type, status, access)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10, $11, 'active', 'public')`,
    [eventTypeId, ws, hostId, e.name, e.slug, e.durationMinutes, e.slotIntervalMinutes, e.bufferBeforeMinutes, e.bufferAfterMinutes, e.maximumAdvanceMinutes, e.meetingType],
  );
}

export interface Counted {
  pool: Pool;
  /** Statements sent, by name ('' for unnamed ones). */
  sent: Map<string, number>;
}

/** A pool of one connection, as app.ts opens the pool of its named statements, whose every query is counted on the way out. */
export function countedPool(url: string, applicationName: string): Counted {
  const pool = createPool(url, { max: 1, applicationName, genericPlans: true, logger: { error: () => undefined } });
  const sent = new Map<string, number>();
  pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const first = args[0] as { name?: string } | string;
      const name = typeof first === 'object' && first.name ? first.name : '';
      sent.set(name, (sent.get(name) ?? 0) + 1);
      return query(...args);
    };
  });
  return { pool, sent };
}

/** Every statement counted. */
export function totalSent(sent: Map<string, number>): number {
  let n = 0;
  for (const k of sent.values()) n += k;
  return n;
}

/** The pid of the pool's one backend and a reader of its CPU time so far (user + system, µs, /proc/<pid>/stat). */
export async function backendCpuUs(pool: Pool): Promise<{ pid: number; read: () => number }> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const pid = rows[0]!.pid;
  return {
    pid,
    read: () => {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
    },
  };
}
