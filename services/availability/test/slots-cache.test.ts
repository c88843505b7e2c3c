import http from 'node:http';
import { newId, SCOPES } from '@sched/contracts';
import { internalAuthorization, makeBooking, waitFor } from '@sched/testing';
import { bookingEvent, startSystem, Tenant, type System } from './support/system';

// The service's clock: fixed, moved by the tests that are about time.
let now = new Date('2026-06-01T00:00:00.000Z');
const TTL_MS = 60_000;
// Monday 2026-06-08 in Berlin (UTC+2): the host works 09:00–17:00 = 07:00Z–15:00Z, 16 Slots.
const MONDAY = '?from=2026-06-08&to=2026-06-08&timezone=UTC';

let sys: System;
let t: Tenant;
let evt: string;
let hostId: string;

beforeAll(async () => {
  sys = await startSystem({ now: () => now, slotsCacheTtlMs: TTL_MS });
  t = await Tenant.create(sys);
  ({ eventTypeId: evt, hostId } = await t.bookable());
});

afterAll(async () => {
  await sys?.close();
});

const startsOn = async (id = evt, query = MONDAY): Promise<string[]> => {
  const res = await t.v1('GET', `/v1/event-types/${id}/slots${query}`);
  expect(res.status).toBe(200);
  return res.body.data.map((s: any) => s.start_at.slice(11, 16));
};
const calendarCalls = () => sys.calendar.requests.filter((r) => r.hostId === hostId).length;
/** Waits for the cache to serve (LISTEN in place), then returns the answer it now holds. */
async function warm(id = evt): Promise<string[]> {
  let starts: string[] = [];
  await waitFor(async () => {
    starts = await startsOn(id);
    const before = calendarCalls();
    await startsOn(id);
    return calendarCalls() === before || null;
  });
  return starts;
}

describe('Slots answer cache', () => {
  it('serves a repeated query without asking calendar-sync or Postgres again, with a fresh request id', async () => {
    await warm();
    const before = calendarCalls();
    const a = await t.v1('GET', `/v1/event-types/${evt}/slots${MONDAY}`);
    const b = await t.v1('GET', `/v1/event-types/${evt}/slots${MONDAY}`);
    expect(calendarCalls()).toBe(before);
    expect(b.body.data).toEqual(a.body.data);
    expect(a.body.data).toHaveLength(16);
    expect(b.body.meta.request_id).not.toBe(a.body.meta.request_id);
    expect(b.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('sends a cached answer byte for byte as it sent the computed one: status, headers and body (but the request id, the gateway\'s)', async () => {
    await warm();
    /** availability's raw answer to one credential (one request id): status, header lines but Date, body bytes. */
    const raw = async (query: string) => {
      const { authorization } = await internalAuthorization('availability', { principal: 'api_key', workspaceId: t.ws, apiKeyId: 'key_test', scopes: SCOPES, requestId: 'req_same' });
      return new Promise<{ status: number; headers: string[]; body: Buffer }>((resolve, reject) => {
        http
          .get(`${sys.serviceUrl}/v1/event-types/${evt}/slots${query}`, { headers: { authorization } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const headers: string[] = [];
              for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== 'date') headers.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
              resolve({ status: res.statusCode!, headers, body: Buffer.concat(chunks) });
            });
          })
          .on('error', reject);
      });
    };
    // A query not asked before: its first answer is computed, its second served from the cache.
    const query = '?from=2026-06-08&to=2026-06-09&timezone=Asia%2FKolkata';
    const before = calendarCalls();
    const computed = await raw(query);
    expect(calendarCalls()).toBe(before + 1);
    const cached = await raw(query);
    expect(calendarCalls()).toBe(before + 1);
    expect(computed.status).toBe(200);
    expect(cached.headers).toEqual(computed.headers);
    expect(cached.body.equals(computed.body)).toBe(true);
    expect(JSON.parse(cached.body.toString('utf8')).meta).toEqual({ request_id: 'req_same' });
    expect(JSON.parse(cached.body.toString('utf8')).data.length).toBeGreaterThan(16);
  });

  it('shows a new Booking from the projection at once, and its cancellation too', async () => {
    await warm();
    const b = makeBooking({ id: newId('bkg'), host_id: hostId, event_type_id: evt, start_at: '2026-06-08T08:00:00.000Z', end_at: '2026-06-08T08:30:00.000Z' });
    const blocked = { blocked_from: '2026-06-08T08:00:00.000Z', blocked_to: '2026-06-08T08:30:00.000Z', invitation_id: null };
    await sys.publish(bookingEvent('booking.created', t.ws, b, blocked));
    await waitFor(async () => !(await startsOn()).includes('08:00') || null);
    expect(await startsOn()).toHaveLength(15);
    await sys.publish(bookingEvent('booking.cancelled', t.ws, { ...b, status: 'cancelled', version: 2 }, blocked));
    await waitFor(async () => (await startsOn()).includes('08:00') || null);
  });

  it('drops the answers of a host whose schedule changes, and of an Event Type that is patched', async () => {
    await warm();
    await t.schedule(hostId, { weekly: { mon: [{ start: '09:00', end: '12:00' }] }, overrides: [] });
    // The clock is fixed, so no TTL passes: only the NOTIFY can make the new schedule show.
    await waitFor(async () => ((await startsOn()).length === 6 ? true : null));
    const patched = await t.admin('PATCH', `/event-types/${evt}`, { duration_minutes: 60 });
    expect(patched.status).toBe(200);
    await waitFor(async () => ((await startsOn()).length === 5 ? true : null));
    await t.admin('PATCH', `/event-types/${evt}`, { duration_minutes: 30 });
    await t.schedule(hostId, { weekly: { mon: [{ start: '09:00', end: '17:00' }], tue: [{ start: '09:00', end: '17:00' }] }, overrides: [] });
    await waitFor(async () => ((await startsOn()).length === 16 ? true : null));
  });

  it('drops a host\'s answers when its calendar connection changes (a projection row written by anyone)', async () => {
    await warm();
    await sys.db.adminPool.query(`UPDATE availability.calendar_connections SET status = 'disconnected' WHERE host_id = $1`, [hostId]);
    await waitFor(async () => ((await t.v1('GET', `/v1/event-types/${evt}/slots${MONDAY}`)).status === 409 ? true : null));
    await sys.db.adminPool.query(`UPDATE availability.calendar_connections SET status = 'connected' WHERE host_id = $1`, [hostId]);
    await waitFor(async () => ((await t.v1('GET', `/v1/event-types/${evt}/slots${MONDAY}`)).status === 200 ? true : null));
  });

  it('keeps other hosts\' answers when one host changes', async () => {
    const other = await t.bookable();
    await warm(other.eventTypeId);
    await warm();
    const before = sys.calendar.requests.filter((r) => r.hostId === other.hostId).length;
    await t.schedule(hostId, { weekly: { mon: [{ start: '09:00', end: '17:00' }], tue: [{ start: '09:00', end: '17:00' }] }, overrides: [] });
    await startsOn(other.eventTypeId);
    expect(sys.calendar.requests.filter((r) => r.hostId === other.hostId).length).toBe(before);
  });

  it('re-reads calendar busy time once the TTL has passed', async () => {
    await warm();
    sys.calendar.behave(hostId, { kind: 'busy', intervals: [{ start_at: '2026-06-08T09:00:00.000Z', end_at: '2026-06-08T09:30:00.000Z' }] });
    try {
      expect(await startsOn()).toContain('09:00'); // still the cached answer: calendar-sync sends no change notice
      now = new Date(now.getTime() + TTL_MS);
      expect(await startsOn()).not.toContain('09:00');
    } finally {
      sys.calendar.behave(hostId, { kind: 'busy', intervals: [] });
      now = new Date(now.getTime() + TTL_MS);
    }
  });

  it('never serves a Slot that time has pushed inside the minimum notice', async () => {
    const notice = await t.eventType(hostId, { minimum_notice_minutes: 60 });
    const start = now;
    try {
      now = new Date('2026-06-08T06:00:00.000Z'); // 60 min before the first Slot (07:00Z)
      expect((await startsOn(notice))[0]).toBe('07:00');
      expect((await startsOn(notice))[0]).toBe('07:00');
      now = new Date('2026-06-08T06:00:00.001Z'); // 07:00Z is now inside the notice
      expect((await startsOn(notice))[0]).toBe('07:30');
    } finally {
      now = start;
    }
  });

  it('is not used while its LISTEN connection is down, and serves again once it is back', async () => {
    await warm();
    const { rows } = await sys.db.adminPool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN "availability_slots_changed"' AND datname = current_database()`);
    expect(rows).toHaveLength(1);
    await sys.db.adminPool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    // Until LISTEN is back each answer is computed afresh, so a change nobody announced still shows.
    sys.calendar.behave(hostId, { kind: 'busy', intervals: [{ start_at: '2026-06-08T10:00:00.000Z', end_at: '2026-06-08T10:30:00.000Z' }] });
    try {
      // The clock is fixed and no NOTIFY announces a calendar change: only an uncached answer shows it.
      await waitFor(async () => !(await startsOn()).includes('10:00') || null);
    } finally {
      sys.calendar.behave(hostId, { kind: 'busy', intervals: [] });
    }
    expect(await startsOn()).toContain('10:00');
    await warm(); // reconnected (within about a second) and caching again
  });
});
