import { newId } from '@sched/contracts';
import { createTestDatabase, startRadicale, testAmqp, waitFor, type TestDatabase, type TestRadicale, internalAuthorization } from '@sched/testing';
import { call, cleanupBroker, outboxEvents, startAvailabilityStub, startCalendarSync, type RunningCalendarSync } from './support/harness';

const PASSWORD = 'Cal-S3cret-Pa55word-7f3a91';
const WRONG_PASSWORD = 'Wr0ng-Pa55word-c0ffee-42';

let db: TestDatabase;
let radicale: TestRadicale;
let availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
let svc: RunningCalendarSync;
const amqp = testAmqp();
const ws = newId('wsp');

const path = (host: string, workspace = ws) => `/admin/v1/workspaces/${workspace}/hosts/${host}/calendar`;

beforeAll(async () => {
  [db, radicale, availability] = await Promise.all([
    createTestDatabase({ services: ['calendar-sync'] }),
    startRadicale({ users: { alice: PASSWORD, bob: 'bob-password-123' } }),
    startAvailabilityStub(),
  ]);
  await radicale.makeCalendar('alice', 'work');
  await radicale.makeCalendar('alice', 'private');
  await radicale.makeCalendar('bob', 'bobs');
  svc = await startCalendarSync({ db, amqp, availabilityUrl: availability.url });
});

afterAll(async () => {
  await svc?.stop();
  await Promise.all([radicale?.close(), availability?.close()]);
  await cleanupBroker(amqp, [200, 400]);
  await db?.drop();
});

describe('PUT /admin/v1/workspaces/:ws/hosts/:host/calendar', () => {
  it('verifies against the server, saves the connection (201, no password) and announces calendar.connection_updated connected', async () => {
    const host = availability.addHost(ws);
    const res = await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: radicale.url, username: 'alice', password: PASSWORD });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^cal_/),
      host_id: host.id,
      provider: 'caldav',
      url: radicale.url,
      username: 'alice',
      // Discovery picked the first calendar of alice's calendar home.
      calendar_url: expect.stringMatching(new RegExp(`^${radicale.url}/alice/(work|private)/$`)),
      status: 'connected',
      error_code: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(res.text).not.toContain(PASSWORD);

    const events = await waitFor(async () => {
      const rows = (await outboxEvents(db, 'calendar.connection_updated')).filter((e) => e.data.host_id === host.id);
      return rows.length === 1 && rows[0]!.published ? rows : null;
    });
    expect(events[0]).toMatchObject({ workspace_id: ws, data: { host_id: host.id, status: 'connected', error_code: null } });
  });

  it('uses the calendar_url given, and a second PUT replaces the connection (200, same id)', async () => {
    const host = availability.addHost(ws);
    const first = await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: radicale.url, username: 'alice', password: PASSWORD });
    expect(first.status).toBe(201);
    const second = await call(svc.url, 'PUT', path(host.id), {
      provider: 'caldav',
      url: `${radicale.url}/alice/`,
      username: 'alice',
      password: PASSWORD,
      calendar_url: `${radicale.url}/alice/private`,
    });
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({ id: first.body.data.id, url: `${radicale.url}/alice/`, calendar_url: `${radicale.url}/alice/private/` });
    const got = await call(svc.url, 'GET', path(host.id));
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(second.body.data);
  });

  it('answers 422 with details password/auth_failed for a wrong password, and stores nothing', async () => {
    const host = availability.addHost(ws);
    const res = await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: radicale.url, username: 'alice', password: WRONG_PASSWORD });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'invalid_reference', message: expect.any(String), details: [{ field: 'password', issue: 'auth_failed' }] });
    expect(res.text).not.toContain(WRONG_PASSWORD);
    expect((await call(svc.url, 'GET', path(host.id))).status).toBe(404);
  });

  it('answers 422 calendar_url/not_found for a calendar that does not exist or belongs to another user', async () => {
    const host = availability.addHost(ws);
    for (const calendarUrl of [`${radicale.url}/alice/nope/`, `${radicale.url}/bob/bobs/`]) {
      const res = await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: radicale.url, username: 'alice', password: PASSWORD, calendar_url: calendarUrl });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ field: 'calendar_url', issue: 'not_found' }]);
    }
  });

  it('answers 422 url/unreachable when nothing listens at the URL', async () => {
    const host = availability.addHost(ws);
    const res = await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: 'http://127.0.0.1:1/', username: 'alice', password: PASSWORD });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'url', issue: 'unreachable' }]);
    // The message names no host or URL (decisions.md §2: no internals).
    expect(res.body.error.message).not.toContain('127.0.0.1');
  });

  it('answers 404 for a host availability does not know in this workspace, before talking to the calendar server', async () => {
    const other = availability.addHost(newId('wsp'));
    for (const host of [newId('hst'), other.id]) {
      const res = await call(svc.url, 'PUT', path(host), { provider: 'caldav', url: 'http://127.0.0.1:1/', username: 'alice', password: PASSWORD });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    // Malformed ids are unknown ids too.
    expect((await call(svc.url, 'PUT', path('hst_bad'), { provider: 'caldav', url: radicale.url, username: 'a', password: 'b' })).status).toBe(404);
  });

  it('answers 400 with details for schema violations (strict body)', async () => {
    const host = availability.addHost(ws);
    const res = await call(svc.url, 'PUT', path(host.id), { provider: 'google', url: 'not a url', username: '', password: PASSWORD, extra: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'provider', issue: 'invalid_value' },
        { field: 'url', issue: 'invalid_format' },
        { field: 'username', issue: 'too_short' },
        { field: 'extra', issue: 'unknown_field' },
      ]),
    );
  });

  it('answers 400 for credentials inside a URL (they would be stored in plain text)', async () => {
    const host = availability.addHost(ws);
    const res = await call(svc.url, 'PUT', path(host.id), {
      provider: 'caldav',
      url: `http://alice:${PASSWORD}@127.0.0.1:1/`,
      username: 'alice',
      password: PASSWORD,
      calendar_url: 'http://alice@127.0.0.1:1/alice/work/',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { field: 'url', issue: 'invalid_format' },
      { field: 'calendar_url', issue: 'invalid_format' },
    ]);
  });

  it('answers 502 upstream_unavailable when availability cannot be reached', async () => {
    const other = await startCalendarSync({ db, amqp, availabilityUrl: 'http://127.0.0.1:1', env: { AVAILABILITY_TIMEOUT_MS: '500' } });
    try {
      const res = await call(other.url, 'PUT', path(newId('hst')), { provider: 'caldav', url: radicale.url, username: 'alice', password: PASSWORD });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('upstream_unavailable');
    } finally {
      await other.stop();
    }
  });
});

describe('GET and DELETE of the connection', () => {
  it('DELETE removes it (204), announces disconnected, and later GET/DELETE answer 404', async () => {
    const host = availability.addHost(ws);
    expect((await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: radicale.url, username: 'alice', password: PASSWORD })).status).toBe(201);
    const del = await call(svc.url, 'DELETE', path(host.id));
    expect(del.status).toBe(204);
    expect((await call(svc.url, 'GET', path(host.id))).status).toBe(404);
    expect((await call(svc.url, 'DELETE', path(host.id))).status).toBe(404);
    const statuses = (await outboxEvents(db, 'calendar.connection_updated')).filter((e) => e.data.host_id === host.id).map((e) => e.data.status);
    expect(statuses).toEqual(['connected', 'disconnected']);
  });

  it('never shows a connection to another workspace (404, as for an unknown host)', async () => {
    const host = availability.addHost(ws);
    expect((await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: radicale.url, username: 'alice', password: PASSWORD })).status).toBe(201);
    const otherWs = newId('wsp');
    expect((await call(svc.url, 'GET', path(host.id, otherWs))).status).toBe(404);
    expect((await call(svc.url, 'DELETE', path(host.id, otherWs))).status).toBe(404);
    // A credential for another workspace than the path's is refused (403), and no credential at all (401).
    const elsewhere = await fetch(`${svc.url}${path(host.id)}`, { headers: await internalAuthorization('calendar-sync', { principal: 'admin', workspaceId: otherWs }) });
    expect(elsewhere.status).toBe(403);
    expect((await fetch(`${svc.url}${path(host.id)}`, { headers: { 'x-workspace-id': ws } })).status).toBe(401);
    expect((await call(svc.url, 'GET', path(host.id))).status).toBe(200);
  });
});

describe('the calendar password', () => {
  it('never appears in logs, API answers or any table of the schema in plain text, and is stored sealed', async () => {
    const host = availability.addHost(ws);
    const put = await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: radicale.url, username: 'alice', password: PASSWORD });
    expect(put.status).toBe(201);
    await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url: radicale.url, username: 'alice', password: WRONG_PASSWORD });
    const get = await call(svc.url, 'GET', path(host.id));
    const busy = await call(svc.url, 'GET', `/internal/v1/workspaces/${ws}/hosts/${host.id}/busy?from=2026-11-23T00:00:00Z&to=2026-11-24T00:00:00Z`);
    expect(busy.status).toBe(200);

    for (const text of [put.text, get.text, busy.text]) expect(text).not.toContain(PASSWORD);
    const logs = svc.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [PASSWORD, WRONG_PASSWORD, Buffer.from(`alice:${PASSWORD}`).toString('base64')]) expect(logs).not.toContain(secret);

    const tables = await db.adminPool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'calendar_sync'`);
    expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['calendar_connections', 'busy_snapshots', 'booking_syncs', 'outbox', 'inbox']));
    for (const { table_name } of tables.rows) {
      const dump = await db.adminPool.query(`SELECT row_to_json(t)::text AS row FROM calendar_sync."${table_name}" t`);
      const text = dump.rows.map((r) => r.row).join('\n');
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(WRONG_PASSWORD);
    }
    const sealed = await db.adminPool.query('SELECT password_sealed FROM calendar_sync.calendar_connections WHERE host_id = $1', [host.id]);
    expect(sealed.rows[0].password_sealed).toMatch(/^v1\.k1\./);
  });
});
