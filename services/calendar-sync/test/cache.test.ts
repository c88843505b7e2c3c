import { newId, toTimestamp } from '@sched/contracts';
import { createTestDatabase, startRadicale, testAmqp, waitFor, type TestDatabase, type TestRadicale } from '@sched/testing';
import {
  at,
  busyPath,
  call,
  changesHeard,
  cleanupBroker,
  icalTime,
  startAvailabilityStub,
  startCalendarSync,
  vcalendar,
  vevent,
  type RunningCalendarSync,
} from './support/harness';

const PASSWORD = 'alice-password-cache';

let db: TestDatabase;
let radicale: TestRadicale;
let availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
let svc: RunningCalendarSync;
let replica: RunningCalendarSync;
const amqp = testAmqp();
const ws = newId('wsp');

const span = (start: Date, end: Date) => ({ start_at: toTimestamp(start), end_at: toTimestamp(end) });

async function connect(via: RunningCalendarSync, hostId: string, calendar: string): Promise<number> {
  const res = await call(via.url, 'PUT', `/admin/v1/workspaces/${ws}/hosts/${hostId}/calendar`, {
    provider: 'caldav',
    url: radicale.url,
    username: 'alice',
    password: PASSWORD,
    calendar_url: `${radicale.url}/alice/${calendar}/`,
  });
  return res.status;
}

async function calendarWith(name: string, uid: string, start: Date): Promise<void> {
  await radicale.makeCalendar('alice', name);
  await radicale.putObject('alice', name, `${uid}.ics`, vcalendar(vevent({ UID: uid, DTSTART: icalTime(start), DTEND: icalTime(new Date(start.getTime() + 3_600_000)) })));
}

/** Busy times of a just-connected host, asked twice: the first read fills the snapshot, whose NOTIFY drops the copies; the second keeps them. */
async function warm(host: string): Promise<any> {
  expect((await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)))).status).toBe(200);
  await heardEverything();
  const res = await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Every change committed before now has been heard by `svc` (harness changesHeard). */
const heardEverything = (): Promise<void> => changesHeard(svc, db);

beforeAll(async () => {
  [db, radicale, availability] = await Promise.all([
    createTestDatabase({ services: ['calendar-sync'] }),
    startRadicale({ users: { alice: PASSWORD } }),
    startAvailabilityStub(),
  ]);
  svc = await startCalendarSync({ db, amqp, availabilityUrl: availability.url });
  replica = await startCalendarSync({ db, amqp, availabilityUrl: availability.url });
  await waitFor(() => svc.parts.cache.isEnabled() && replica.parts.cache.isEnabled());
});

afterAll(async () => {
  await replica?.stop();
  await svc?.stop();
  await Promise.all([radicale?.close(), availability?.close()]);
  await cleanupBroker(amqp, [200, 400]);
  await db?.drop();
});

describe('in-process copies of connections and snapshots', () => {
  it("serves busy queries from memory and drops the copies when another replica replaces or deletes the connection", async () => {
    const host = availability.addHost(ws).id;
    await calendarWith('first', 'one', at(2, 9));
    await calendarWith('second', 'two', at(3, 9));
    expect(await connect(svc, host, 'first')).toBe(201);

    const first = await warm(host);
    expect(first.intervals).toEqual([span(at(2, 9), at(2, 10))]);
    const conn = svc.parts.cache.getConnection(ws, host);
    expect(conn).toBeDefined();
    expect(svc.parts.cache.getSnapshot(conn!)).toBeDefined();

    // Another replica points the connection at another calendar: this one must not keep serving the old one.
    expect(await connect(replica, host, 'second')).toBe(200);
    await waitFor(() => svc.parts.cache.getConnection(ws, host) === undefined);
    const second = await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
    expect(second.body.data.intervals).toEqual([span(at(3, 9), at(3, 10))]);

    const del = await call(replica.url, 'DELETE', `/admin/v1/workspaces/${ws}/hosts/${host}/calendar`);
    expect(del.status).toBe(204);
    await waitFor(() => svc.parts.cache.getConnection(ws, host) === undefined);
    expect((await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)))).status).toBe(404);
  });

  it('drops a copy on any change of the row by anyone, but not on the bookkeeping columns', async () => {
    const host = availability.addHost(ws).id;
    await calendarWith('third', 'three', at(4, 9));
    expect(await connect(svc, host, 'third')).toBe(201);
    await warm(host);
    const conn = svc.parts.cache.getConnection(ws, host)!;
    expect(conn).toBeDefined();

    await db.adminPool.query(
      `UPDATE calendar_sync.calendar_connections SET last_queried_at = now(), refresh_lease_until = now() + interval '1 minute' WHERE id = $1`,
      [conn.id],
    );
    await heardEverything();
    expect(svc.parts.cache.getConnection(ws, host)).toBe(conn);
    expect(svc.parts.cache.getSnapshot(conn)).toBeDefined();

    // A snapshot aged by hand (as by another replica's refresh) is read again: it is no longer fresh.
    await db.adminPool.query(`UPDATE calendar_sync.busy_snapshots SET fetched_at = now() - interval '10 minutes' WHERE connection_id = $1`, [conn.id]);
    await heardEverything();
    expect(svc.parts.cache.getSnapshot(conn)).toBeUndefined();
    await warm(host);
    const again = svc.parts.cache.getConnection(ws, host)!;
    expect(again).toBeDefined();

    await db.adminPool.query(`UPDATE calendar_sync.calendar_connections SET status = 'error', error_code = 'auth_failed' WHERE id = $1`, [again.id]);
    await heardEverything();
    expect(svc.parts.cache.getConnection(ws, host)).toBeUndefined();
    // Read again from the database (a fresh snapshot: no provider call, so no recovery either).
    await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)));
    expect(svc.parts.cache.getConnection(ws, host)?.status).toBe('error');
  });

  it('serves nothing from memory while LISTEN is down, and resumes once it is back', async () => {
    const host = availability.addHost(ws).id;
    await calendarWith('fourth', 'four', at(5, 9));
    expect(await connect(svc, host, 'fourth')).toBe(201);
    await warm(host);
    expect(svc.parts.cache.getConnection(ws, host)).toBeDefined();

    await db.adminPool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN "calendar_sync_changed"'`);
    await waitFor(() => !svc.parts.cache.isEnabled());
    expect(svc.parts.cache.getConnection(ws, host)).toBeUndefined();
    // Changes made now go unheard, yet are seen: reads go to the database.
    await db.adminPool.query(`DELETE FROM calendar_sync.calendar_connections WHERE host_id = $1`, [host]);
    expect((await call(svc.url, 'GET', busyPath(ws, host, at(1), at(10)))).status).toBe(404);
    await waitFor(() => svc.parts.cache.isEnabled(), { timeoutMs: 10_000 });
  });
});
