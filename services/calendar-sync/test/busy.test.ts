import { fromZonedTime } from 'date-fns-tz';
import { newId, toTimestamp } from '@sched/contracts';
import { createTestDatabase, makeBooking, startRadicale, testAmqp, waitFor, type TestDatabase, type TestRadicale } from '@sched/testing';
import { startCountingProxy } from './support/counting-proxy';
import {
  at,
  busyPath,
  call,
  changesHeard,
  cleanupBroker,
  icalDate,
  icalTime,
  outboxEvents,
  startAvailabilityStub,
  startCalendarSync,
  startPublisher,
  vcalendar,
  vevent,
  type RunningCalendarSync,
} from './support/harness';

const PASSWORD = 'alice-password-busy';

let db: TestDatabase;
let radicale: TestRadicale;
let availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
let proxy: Awaited<ReturnType<typeof startCountingProxy>>;
let svc: RunningCalendarSync;
let publisher: Awaited<ReturnType<typeof startPublisher>>;
const amqp = testAmqp();
const ws = newId('wsp');

const span = (start: Date, end: Date) => ({ start_at: toTimestamp(start), end_at: toTimestamp(end) });

/** A host with its own Radicale calendar, connected through the API (directly or through the counting proxy). */
async function connectedHost(calendar: string, opts: { timezone?: string; viaProxy?: boolean } = {}): Promise<string> {
  const host = availability.addHost(ws, { timezone: opts.timezone ?? 'Europe/Paris' });
  await radicale.makeCalendar('alice', calendar);
  const base = opts.viaProxy ? proxy.url : radicale.url;
  const res = await call(svc.url, 'PUT', `/admin/v1/workspaces/${ws}/hosts/${host.id}/calendar`, {
    provider: 'caldav',
    url: base,
    username: 'alice',
    password: PASSWORD,
    calendar_url: `${base}/alice/${calendar}/`,
  });
  expect(res.status).toBe(201);
  return host.id;
}

async function ageSnapshot(hostId: string, minutes = 10): Promise<void> {
  const res = await db.adminPool.query(
    `UPDATE calendar_sync.busy_snapshots s SET fetched_at = now() - make_interval(mins => $2)
       FROM calendar_sync.calendar_connections c WHERE c.id = s.connection_id AND c.host_id = $1`,
    [hostId, minutes],
  );
  expect(res.rowCount).toBe(1);
  await changesHeard(svc, db); // the in-memory copy of the snapshot is dropped by the change's NOTIFY
}

async function connectionStatus(hostId: string): Promise<string> {
  const res = await db.adminPool.query('SELECT status FROM calendar_sync.calendar_connections WHERE host_id = $1', [hostId]);
  return res.rows[0].status;
}

beforeAll(async () => {
  [db, radicale, availability] = await Promise.all([
    createTestDatabase({ services: ['calendar-sync'] }),
    startRadicale({ users: { alice: PASSWORD } }),
    startAvailabilityStub(),
  ]);
  proxy = await startCountingProxy(radicale.port);
  svc = await startCalendarSync({ db, amqp, availabilityUrl: availability.url });
  publisher = await startPublisher(amqp);
});

afterAll(async () => {
  await publisher?.broker.close();
  await svc?.stop();
  await Promise.all([radicale?.close(), availability?.close(), proxy?.close()]);
  await cleanupBroker(amqp, [200, 400]);
  await db?.drop();
});

describe('GET /internal/v1/workspaces/:ws/hosts/:host/busy', () => {
  it('returns single, expanded weekly and all-day (host-local day) events; transparent, cancelled and its own Booking events are free', async () => {
    const host = await connectedHost('mixed', { timezone: 'America/New_York' });
    const put = (name: string, ...events: string[]) => radicale.putObject('alice', 'mixed', `${name}.ics`, vcalendar(...events));
    await put('single', vevent({ UID: 'single', DTSTART: icalTime(at(2, 10)), DTEND: icalTime(at(2, 11)), SUMMARY: 'Dentist' }));
    await put('weekly', vevent({ UID: 'weekly', DTSTART: icalTime(at(3, 9)), DTEND: icalTime(at(3, 9, 30)), RRULE: 'FREQ=WEEKLY;COUNT=3', SUMMARY: 'Standup' }));
    await put('allday', vevent({ UID: 'allday', 'DTSTART;VALUE=DATE': icalDate(at(5)), 'DTEND;VALUE=DATE': icalDate(at(6)), SUMMARY: 'Off' }));
    await put('transparent', vevent({ UID: 'transparent', DTSTART: icalTime(at(2, 12)), DTEND: icalTime(at(2, 13)), TRANSP: 'TRANSPARENT' }));
    await put('cancelled', vevent({ UID: 'cancelled', DTSTART: icalTime(at(2, 14)), DTEND: icalTime(at(2, 15)), STATUS: 'CANCELLED' }));
    // An event in this service's UID form whose Booking is not this host's: somebody else's booking, so busy.
    await put('foreign', vevent({ UID: `${newId('bkg')}@scheduling-service`, DTSTART: icalTime(at(2, 18)), DTEND: icalTime(at(2, 19)) }));

    // This host's own Booking, written by the service itself, must not block (availability has it).
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(2, 16)) });
    await publisher.publish('booking.created', ws, booking);
    await waitFor(async () => (await outboxEvents(db, 'calendar.synced')).some((e) => e.data.booking_id === booking.id));
    expect(await radicale.getObject('alice', 'mixed', `${booking.id}.ics`)).toContain(`UID:${booking.id}@scheduling-service`);

    const res = await call(svc.url, 'GET', busyPath(ws, host, at(1), at(20)));
    expect(res.status).toBe(200);
    const day5 = at(5).toISOString().slice(0, 10);
    const day6 = at(6).toISOString().slice(0, 10);
    expect(res.body.data).toEqual({
      host_id: host,
      snapshot_at: expect.any(String),
      intervals: [
        span(at(2, 10), at(2, 11)),
        span(at(2, 18), at(2, 19)),
        span(at(3, 9), at(3, 9, 30)),
        // The whole local day in the host's zone, not the UTC day.
        span(fromZonedTime(`${day5}T00:00:00`, 'America/New_York'), fromZonedTime(`${day6}T00:00:00`, 'America/New_York')),
        span(at(10, 9), at(10, 9, 30)),
        span(at(17, 9), at(17, 9, 30)),
      ],
    });
    // Only intervals overlapping the window come back.
    const narrow = await call(svc.url, 'GET', busyPath(ws, host, at(2, 10, 30), at(2, 12)));
    expect(narrow.body.data.intervals).toEqual([span(at(2, 10), at(2, 11))]);
  });

  it('answers 404 for a host without a connection, and 400 for a bad window', async () => {
    expect((await call(svc.url, 'GET', busyPath(ws, newId('hst'), at(1), at(2)))).status).toBe(404);
    const host = await connectedHost('badwindow');
    const reversed = await call(svc.url, 'GET', busyPath(ws, host, at(2), at(1)));
    expect(reversed.status).toBe(400);
    expect(reversed.body.error.details).toEqual([{ field: 'to', issue: 'out_of_range' }]);
    expect((await call(svc.url, 'GET', busyPath(ws, host, at(1), at(102)))).status).toBe(400);
    const badFormat = await call(svc.url, 'GET', `/internal/v1/workspaces/${ws}/hosts/${host}/busy?from=2026-11-23T00:00:00%2B01:00&to=2026-11-24T00:00:00Z`);
    expect(badFormat.status).toBe(400);
    expect(badFormat.body.error.details).toEqual([{ field: 'from', issue: 'invalid_format' }]);
    const unknown = await call(svc.url, 'GET', `${busyPath(ws, host, at(1), at(2))}&x=1`);
    expect(unknown.body.error.details).toEqual([{ field: 'x', issue: 'unknown_field' }]);
  });

  it('fails closed: Radicale down and no fresh snapshot → 503 calendar_unavailable with Retry-After; a fresh snapshot is still served', async () => {
    const warm = await connectedHost('warm');
    const cold = await connectedHost('cold');
    await radicale.putObject('alice', 'warm', 'e.ics', vcalendar(vevent({ UID: 'e', DTSTART: icalTime(at(4, 8)), DTEND: icalTime(at(4, 9)) })));
    const before = await call(svc.url, 'GET', busyPath(ws, warm, at(1), at(10)));
    expect(before.body.data.intervals).toEqual([span(at(4, 8), at(4, 9))]);

    await radicale.stop();
    try {
      const served = await call(svc.url, 'GET', busyPath(ws, warm, at(1), at(10)));
      expect(served.status).toBe(200);
      expect(served.body.data).toEqual(before.body.data);

      const noSnapshot = await call(svc.url, 'GET', busyPath(ws, cold, at(1), at(10)));
      expect(noSnapshot.status).toBe(503);
      expect(noSnapshot.headers.get('retry-after')).toBe('5');
      expect(noSnapshot.body.error.code).toBe('calendar_unavailable');

      await ageSnapshot(warm);
      const stale = await call(svc.url, 'GET', busyPath(ws, warm, at(1), at(10)));
      expect(stale.status).toBe(503);
      // A window outside the cached range is read through; with the provider down that fails closed too.
      expect((await call(svc.url, 'GET', busyPath(ws, warm, at(100), at(101)))).status).toBe(503);
      // An outage is not a broken connection: the host stays bookable (503s, not event_type_not_bookable).
      expect(await connectionStatus(warm)).toBe('connected');
    } finally {
      await radicale.start();
    }
    const after = await call(svc.url, 'GET', busyPath(ws, warm, at(1), at(10)));
    expect(after.status).toBe(200);
    expect(new Date(after.body.data.snapshot_at).getTime()).toBeGreaterThan(new Date(before.body.data.snapshot_at).getTime());
  });

  it("follows a change of the host's time zone (re-read from availability at the next full read)", async () => {
    const host = await connectedHost('zone', { timezone: 'Europe/Paris' });
    const day = at(6).toISOString().slice(0, 10);
    const next = at(7).toISOString().slice(0, 10);
    await radicale.putObject('alice', 'zone', 'off.ics', vcalendar(vevent({ UID: 'off', 'DTSTART;VALUE=DATE': icalDate(at(6)), 'DTEND;VALUE=DATE': icalDate(at(7)) })));
    const paris = await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
    expect(paris.body.data.intervals).toEqual([span(fromZonedTime(`${day}T00:00:00`, 'Europe/Paris'), fromZonedTime(`${next}T00:00:00`, 'Europe/Paris'))]);

    availability.hosts.get(host)!.timezone = 'Asia/Tokyo';
    await radicale.putObject('alice', 'zone', 'other.ics', vcalendar(vevent({ UID: 'other', DTSTART: icalTime(at(8, 8)), DTEND: icalTime(at(8, 9)) })));
    await ageSnapshot(host);
    await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10))); // full read: the calendar changed
    const tokyo = await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
    expect(tokyo.body.data.intervals).toEqual([
      span(fromZonedTime(`${day}T00:00:00`, 'Asia/Tokyo'), fromZonedTime(`${next}T00:00:00`, 'Asia/Tokyo')),
      span(at(8, 8), at(8, 9)),
    ]);
  });

  it('reads a window outside the cached range straight from the provider', async () => {
    const host = await connectedHost('far');
    await radicale.putObject('alice', 'far', 'far.ics', vcalendar(vevent({ UID: 'far', DTSTART: icalTime(at(100, 10)), DTEND: icalTime(at(100, 11)) })));
    const res = await call(svc.url, 'GET', busyPath(ws, host, at(99), at(102)));
    expect(res.status).toBe(200);
    expect(res.body.data.intervals).toEqual([span(at(100, 10), at(100, 11))]);
  });
});

describe('snapshot refresh', () => {
  it('re-reads nothing but the ctag (one PROPFIND) when the calendar is unchanged, and does a full read when it changed', async () => {
    const host = await connectedHost('ctag', { viaProxy: true });
    await radicale.putObject('alice', 'ctag', 'a.ics', vcalendar(vevent({ UID: 'a', DTSTART: icalTime(at(3, 8)), DTEND: icalTime(at(3, 9)) })));
    proxy.reset();
    const first = await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
    expect(first.body.data.intervals).toEqual([span(at(3, 8), at(3, 9))]);
    expect(proxy.counts).toEqual({ PROPFIND: 1, REPORT: 1 });

    proxy.reset();
    await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
    expect(proxy.counts).toEqual({}); // fresh snapshot: no provider request at all

    await ageSnapshot(host);
    proxy.reset();
    const probed = await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
    expect(proxy.counts).toEqual({ PROPFIND: 1 });
    expect(probed.body.data.intervals).toEqual(first.body.data.intervals);
    expect(new Date(probed.body.data.snapshot_at).getTime()).toBeGreaterThan(new Date(first.body.data.snapshot_at).getTime());

    // Changed behind our back (not through the proxy): the ctag moves, so the range is read again.
    await radicale.putObject('alice', 'ctag', 'b.ics', vcalendar(vevent({ UID: 'b', DTSTART: icalTime(at(5, 8)), DTEND: icalTime(at(5, 9)) })));
    await ageSnapshot(host);
    proxy.reset();
    const reread = await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
    expect(proxy.counts).toEqual({ PROPFIND: 1, REPORT: 1 });
    expect(reread.body.data.intervals).toEqual([span(at(3, 8), at(3, 9)), span(at(5, 8), at(5, 9))]);
  });

  it('the refresher keeps recently queried hosts warm, skips idle ones, and two replicas never refresh one host twice', async () => {
    const hosts = [await connectedHost('r1', { viaProxy: true }), await connectedHost('r2', { viaProxy: true }), await connectedHost('r3', { viaProxy: true })];
    for (const h of hosts) expect((await call(svc.url, 'GET', busyPath(ws, h, at(1), at(5)))).status).toBe(200);
    for (const h of hosts) await ageSnapshot(h);
    // Only these hosts are due; r3 has not been asked for in a while.
    await db.adminPool.query(`UPDATE calendar_sync.calendar_connections SET last_queried_at = now() - interval '1 day' WHERE NOT (host_id = ANY($1))`, [hosts.slice(0, 2)]);

    const replica = await startCalendarSync({ db, amqp, availabilityUrl: availability.url });
    try {
      proxy.reset();
      const [a, b] = await Promise.all([svc.parts.refresher.runOnce(), replica.parts.refresher.runOnce()]);
      expect(a + b).toBe(2);
      expect(proxy.counts).toEqual({ PROPFIND: 2 }); // one ctag probe per active host, no full reads
    } finally {
      await replica.stop();
    }
    const fetched = await db.adminPool.query(
      `SELECT c.host_id, s.fetched_at > now() - interval '1 minute' AS fresh
         FROM calendar_sync.busy_snapshots s JOIN calendar_sync.calendar_connections c ON c.id = s.connection_id WHERE c.host_id = ANY($1)`,
      [hosts],
    );
    expect(Object.fromEntries(fetched.rows.map((r) => [r.host_id, r.fresh]))).toEqual({ [hosts[0]!]: true, [hosts[1]!]: true, [hosts[2]!]: false });
    // Warm again: with Radicale gone, the refreshed hosts are still served.
    await radicale.stop();
    try {
      expect((await call(svc.url, 'GET', busyPath(ws, hosts[0]!, at(1), at(5)))).status).toBe(200);
      expect((await call(svc.url, 'GET', busyPath(ws, hosts[2]!, at(1), at(5)))).status).toBe(503);
    } finally {
      await radicale.start();
    }
  });

  it('marks a connection whose credentials stop working as error (calendar.connection_updated) and back to connected on recovery', async () => {
    const host = await connectedHost('creds');
    expect((await call(svc.url, 'GET', busyPath(ws, host, at(1), at(5)))).status).toBe(200);
    await db.adminPool.query(`UPDATE calendar_sync.calendar_connections SET last_queried_at = now() - interval '1 day' WHERE host_id <> $1`, [host]);
    await db.adminPool.query(`UPDATE calendar_sync.calendar_connections SET username = 'nobody' WHERE host_id = $1`, [host]);
    await ageSnapshot(host);

    await svc.parts.refresher.runOnce();
    expect(await connectionStatus(host)).toBe('error');
    expect((await call(svc.url, 'GET', busyPath(ws, host, at(1), at(5)))).status).toBe(503);

    await db.adminPool.query(`UPDATE calendar_sync.calendar_connections SET username = 'alice' WHERE host_id = $1`, [host]);
    await changesHeard(svc, db);
    await svc.parts.refresher.runOnce();
    expect(await connectionStatus(host)).toBe('connected');
    const updates = (await outboxEvents(db, 'calendar.connection_updated')).filter((e) => e.data.host_id === host).map((e) => e.data);
    expect(updates).toEqual([
      { host_id: host, status: 'connected', error_code: null },
      { host_id: host, status: 'error', error_code: 'auth_failed' },
      { host_id: host, status: 'connected', error_code: null },
    ]);
  });
});
