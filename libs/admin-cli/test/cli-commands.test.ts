import { newId } from '@sched/contracts';
import { ADMIN_TOKEN, runAgainst, startStubServer, type StubServer } from './support/cli-harness';

const WS = newId('wsp');
const HOST = newId('hst');
const EVT = newId('evt');
const WHE = newId('whe');
const KEY = newId('key');
const T = '2026-11-22T09:30:00.000Z';

let stub: StubServer;
beforeEach(async () => {
  stub = await startStubServer();
});
afterEach(async () => {
  await stub.close();
});

const ok = (data: unknown, status = 200, meta: Record<string, unknown> = {}) => ({ status, body: { data, meta: { ...meta } } });
const last = () => stub.requests[stub.requests.length - 1]!;
const run = (...argv: string[]) => runAgainst(stub, argv);

describe('workspace and API key commands', () => {
  it('workspace create posts {name, mode} with the admin token and prints the workspace as key/value lines', async () => {
    stub.enqueue(ok({ id: WS, name: 'Acme', mode: 'test', created_at: T }, 201));
    const r = await run('workspace', 'create', '--name', 'Acme', '--mode', 'test');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(last()).toMatchObject({ method: 'POST', path: '/admin/v1/workspaces', json: { name: 'Acme', mode: 'test' } });
    expect(last().headers.authorization).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(r.stdout).toBe(`id          ${WS}\nname        Acme\nmode        test\ncreated_at  ${T}\n`);
  });

  it('--json prints the data for scripts, before or after the command', async () => {
    const ws = { id: WS, name: 'Acme', mode: 'live', created_at: T };
    stub.enqueue(ok(ws, 201), ok(ws, 201));
    expect(JSON.parse((await run('--json', 'workspace', 'create', '--name', 'Acme')).stdout)).toEqual(ws);
    expect(JSON.parse((await run('workspace', 'create', '--name', 'Acme', '--json')).stdout)).toEqual(ws);
  });

  it('api-key create sends name, scopes, expiry and rate limit, and shows the key once with a warning', async () => {
    stub.enqueue(ok({ id: KEY, workspace_id: WS, name: 'crm', key_hint: 'sk_live_AbCd', scopes: ['bookings:read', 'bookings:write'], rate_limit: { limit: 1000, window_seconds: 10 }, expires_at: null, revoked_at: null, created_at: T, key: 'sk_live_SECRET' }, 201));
    const r = await run('api-key', 'create', '-w', WS, '--name', 'crm', '--scopes', 'bookings:read, bookings:write', '--rate-limit', '1000/10', '--expires-at', '2027-01-01T00:00:00Z');
    expect(r.code).toBe(0);
    expect(last()).toMatchObject({
      method: 'POST',
      path: `/admin/v1/workspaces/${WS}/api-keys`,
      json: { name: 'crm', scopes: ['bookings:read', 'bookings:write'], expires_at: '2027-01-01T00:00:00Z', rate_limit: { limit: 1000, window_seconds: 10 } },
    });
    expect(r.stdout).toMatch(/^scopes\s+bookings:read,bookings:write$/m);
    expect(r.stdout).toMatch(/^rate_limit\s+\{"limit":1000,"window_seconds":10\}$/m);
    expect(r.stdout).toContain('key: sk_live_SECRET\n  shown once: store it now');
    expect(r.stdout.match(/sk_live_SECRET/g)).toHaveLength(1);
  });

  it('api-key list prints a table; api-key revoke posts to the key; ADMIN_WORKSPACE stands in for --workspace', async () => {
    stub.enqueue(
      ok([
        { id: KEY, workspace_id: WS, name: 'crm', key_hint: 'sk_live_AbCd', scopes: ['bookings:read'], rate_limit: null, expires_at: null, revoked_at: null, created_at: T },
        { id: 'key_2', workspace_id: WS, name: 'reporting', key_hint: 'sk_live_XyZw', scopes: ['bookings:read', 'event_types:read'], rate_limit: null, expires_at: null, revoked_at: T, created_at: T },
      ]),
    );
    const list = await runAgainst(stub, ['api-key', 'list'], { env: { ADMIN_WORKSPACE: WS } });
    expect(last()).toMatchObject({ method: 'GET', path: `/admin/v1/workspaces/${WS}/api-keys` });
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+KEY_HINT\s+SCOPES\s+RATE_LIMIT\s+EXPIRES_AT\s+REVOKED_AT\s+CREATED_AT$/);
    expect(list.stdout).toMatch(/key_2\s+reporting\s+sk_live_XyZw\s+bookings:read,event_types:read\s+-\s+-\s+2026/);

    stub.enqueue(ok({ id: KEY, name: 'crm', revoked_at: T }));
    expect((await run('api-key', 'revoke', KEY, '--workspace', WS)).code).toBe(0);
    expect(last()).toMatchObject({ method: 'POST', path: `/admin/v1/workspaces/${WS}/api-keys/${KEY}/revoke`, body: '' });
  });
});

describe('host, schedule, calendar and event type commands', () => {
  it('host create sends the host fields', async () => {
    stub.enqueue(ok({ id: HOST, name: 'Grace', email: 'grace@example.com', timezone: 'Europe/Paris' }, 201));
    const r = await run('host', 'create', '-w', WS, '--name', 'Grace', '--email', 'grace@example.com', '--timezone', 'Europe/Paris', '--conferencing-url-template', 'https://meet.example.com/{booking_id}');
    expect(r.code).toBe(0);
    expect(last()).toMatchObject({
      method: 'POST',
      path: `/admin/v1/workspaces/${WS}/hosts`,
      json: { name: 'Grace', email: 'grace@example.com', timezone: 'Europe/Paris', conferencing_url_template: 'https://meet.example.com/{booking_id}' },
    });
    expect(r.stdout).toMatch(new RegExp(`^id\\s+${HOST}$`, 'm'));
  });

  it('schedule set PUTs the JSON given inline (--data) or from a file (--file)', async () => {
    const schedule = { weekly: { mon: [{ start: '09:00', end: '17:00' }] }, overrides: [{ date: '2026-12-24', intervals: [] }] };
    stub.enqueue(ok({ host_id: HOST, ...schedule, updated_at: T }), ok({ host_id: HOST, ...schedule, updated_at: T }));
    expect((await run('schedule', 'set', '-w', WS, '--host', HOST, '--data', JSON.stringify(schedule))).code).toBe(0);
    expect(last()).toMatchObject({ method: 'PUT', path: `/admin/v1/workspaces/${WS}/hosts/${HOST}/schedule`, json: schedule });
    const fromFile = await runAgainst(stub, ['schedule', 'set', '-w', WS, '--host', HOST, '--file', 'schedule.json'], {
      readFile: (p) => {
        expect(p).toBe('schedule.json');
        return JSON.stringify(schedule);
      },
    });
    expect(fromFile.code).toBe(0);
    expect(last().json).toEqual(schedule);
    expect(fromFile.stdout).toMatch(/^weekly\s+\{"mon":\[\{"start":"09:00","end":"17:00"\}\]\}$/m);
  });

  it('calendar connect PUTs the CalDAV connection with the password from $CALDAV_PASSWORD and never prints it', async () => {
    stub.enqueue(ok({ id: 'cal_1', host_id: HOST, provider: 'caldav', url: 'http://127.0.0.1:5232/', username: 'grace', calendar_url: null, created_at: T, updated_at: T }));
    const r = await runAgainst(stub, ['calendar', 'connect', '-w', WS, '--host', HOST, '--caldav-url', 'http://127.0.0.1:5232/', '--username', 'grace'], { env: { CALDAV_PASSWORD: 'pw-secret' } });
    expect(r.code).toBe(0);
    expect(last()).toMatchObject({ method: 'PUT', path: `/admin/v1/workspaces/${WS}/hosts/${HOST}/calendar`, json: { provider: 'caldav', url: 'http://127.0.0.1:5232/', username: 'grace', password: 'pw-secret' } });
    expect(r.stdout + r.stderr).not.toContain('pw-secret');
  });

  it('calendar connect-oauth POSTs the provider (and calendar id) and prints the authorization URL alone on stdout; a bad provider is a usage error', async () => {
    const url = 'https://accounts.google.com/o/oauth2/v2/auth?client_id=c&state=s';
    stub.enqueue(ok({ provider: 'google', authorization_url: url, expires_at: T }, 201));
    const r = await runAgainst(stub, ['calendar', 'connect-oauth', '-w', WS, '--host', HOST, '--provider', 'google', '--calendar-id', 'team@example.com']);
    expect(r.code).toBe(0);
    expect(last()).toMatchObject({ method: 'POST', path: `/admin/v1/workspaces/${WS}/hosts/${HOST}/calendar/oauth`, json: { provider: 'google', calendar_id: 'team@example.com' } });
    expect(r.stdout).toBe(`${url}\n`);
    expect(r.stderr).toContain(T);
    const bad = await runAgainst(stub, ['calendar', 'connect-oauth', '-w', WS, '--host', HOST, '--provider', 'caldav']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--provider must be google or microsoft');
  });

  it('event-type create maps flags to fields (integers as numbers); update PATCHes only the flags given', async () => {
    stub.enqueue(ok({ id: EVT, name: 'Intro call', access: 'public' }, 201));
    const r = await run('event-type', 'create', '-w', WS, '--host', HOST, '--name', 'Intro call', '--slug', 'intro', '--duration', '30', '--meeting-type', 'video', '--buffer-after', '10', '--access', 'invitation_only');
    expect(r.code).toBe(0);
    expect(last()).toMatchObject({ method: 'POST', path: `/admin/v1/workspaces/${WS}/event-types` });
    expect(last().json).toEqual({ host_id: HOST, name: 'Intro call', slug: 'intro', duration_minutes: 30, meeting_type: 'video', buffer_after_minutes: 10, access: 'invitation_only' });

    stub.enqueue(ok({ id: EVT, status: 'inactive' }));
    expect((await run('event-type', 'update', EVT, '-w', WS, '--status', 'inactive', '--clear-description')).code).toBe(0);
    expect(last()).toMatchObject({ method: 'PATCH', path: `/admin/v1/workspaces/${WS}/event-types/${EVT}`, json: { status: 'inactive', description: null } });
  });
});

describe('webhook endpoint, delivery and dead-letter commands', () => {
  it('webhook-endpoint create shows the secret once; list prints a table; update, delete and rotate-secret use their paths', async () => {
    stub.enqueue(ok({ id: WHE, workspace_id: WS, url: 'https://hooks.example.com/s', events: ['booking.created'], created_at: T, secret: 'whsec_c2VjcmV0' }, 201));
    const created = await run('webhook-endpoint', 'create', '-w', WS, '--endpoint-url', 'https://hooks.example.com/s', '--events', 'booking.created');
    expect(last()).toMatchObject({ method: 'POST', path: `/admin/v1/workspaces/${WS}/webhook-endpoints`, json: { url: 'https://hooks.example.com/s', events: ['booking.created'] } });
    expect(created.stdout).toContain('secret: whsec_c2VjcmV0\n  shown once');

    stub.enqueue(ok([{ id: WHE, workspace_id: WS, url: 'https://hooks.example.com/s', events: ['booking.created', 'calendar.failed'], enabled: false, disabled_reason: 'gone', created_at: T, updated_at: T }]));
    const list = await run('webhook-endpoint', 'list', '-w', WS);
    const [header, row, end] = list.stdout.split('\n');
    expect(header).toMatch(/^ID {26}URL {26}EVENTS {27}ENABLED  DISABLED_REASON  CREATED_AT$/);
    expect(row).toBe(`${WHE}  https://hooks.example.com/s  booking.created,calendar.failed  false    gone             ${T}`);
    expect(end).toBe('');

    stub.enqueue(ok({ id: WHE, events: ['booking.cancelled'] }), ok({ id: WHE, enabled: false }), { status: 204 }, ok({ id: WHE, secret: 'whsec_bmV3' }));
    await run('webhook-endpoint', 'update', WHE, '-w', WS, '--events', 'booking.cancelled');
    expect(last()).toMatchObject({ method: 'PATCH', path: `/admin/v1/workspaces/${WS}/webhook-endpoints/${WHE}`, json: { events: ['booking.cancelled'] } });
    await run('webhook-endpoint', 'update', WHE, '-w', WS, '--disable');
    expect(last().json).toEqual({ enabled: false });
    expect((await run('webhook-endpoint', 'delete', WHE, '-w', WS)).stdout).toBe(`deleted ${WHE}\n`);
    expect(last()).toMatchObject({ method: 'DELETE', path: `/admin/v1/workspaces/${WS}/webhook-endpoints/${WHE}` });
    expect((await run('webhook-endpoint', 'rotate-secret', WHE, '-w', WS)).stdout).toContain('new secret: whsec_bmV3');
    expect(last()).toMatchObject({ method: 'POST', path: `/admin/v1/workspaces/${WS}/webhook-endpoints/${WHE}/rotate-secret` });
  });

  it('deliveries list filters by --status and --endpoint, prints the columns present and the next cursor', async () => {
    const attempts = [{ number: 1, attempted_at: T, status_code: 500, latency_ms: 12, error_kind: 'http_status', error: 'HTTP 500' }];
    stub.enqueue(ok([{ id: 'whd_1', workspace_id: WS, endpoint_id: WHE, event_id: 'wev_1', event_type: 'booking.created', status: 'failed', attempt_count: 8, next_attempt_at: null, last_error: 'HTTP 500', created_at: T, updated_at: T, succeeded_at: null, failed_at: T, attempts }], 200, { next_cursor: 'c2' }));
    const r = await run('deliveries', 'list', '-w', WS, '--status', 'failed', '--endpoint', WHE, '--limit', '50');
    expect(last()).toMatchObject({ method: 'GET', path: `/admin/v1/workspaces/${WS}/webhook-deliveries` });
    expect(Object.fromEntries(last().query)).toEqual({ status: 'failed', endpoint_id: WHE, limit: '50' });
    expect(r.stdout.split('\n')[0]).toMatch(/^ID\s+ENDPOINT_ID\s+EVENT_ID\s+EVENT_TYPE\s+STATUS\s+ATTEMPT_COUNT\s+LAST_ERROR\s+NEXT_ATTEMPT_AT\s+CREATED_AT$/);
    expect(r.stdout).toMatch(/whd_1\s+whe_\S+\s+wev_1\s+booking.created\s+failed\s+8\s+HTTP 500\s+-\s+2026/);
    expect(r.stdout).not.toContain('latency_ms');
    expect(r.stderr).toBe('more: add --cursor c2\n');
  });

  it('delivery replay <id> and deliveries replay --endpoint --from --to post to their paths', async () => {
    stub.enqueue(ok({ requeued: 1 }, 202), ok({ requeued: 3 }, 202));
    expect((await run('delivery', 'replay', 'whd_1')).code).toBe(0);
    expect(last()).toMatchObject({ method: 'POST', path: '/admin/v1/webhook-deliveries/whd_1/replay' });
    const r = await run('deliveries', 'replay', '-w', WS, '--endpoint', WHE, '--from', '2026-11-01T00:00:00Z', '--to', '2026-11-02T00:00:00Z');
    expect(last()).toMatchObject({ method: 'POST', path: `/admin/v1/workspaces/${WS}/webhook-deliveries/replay`, json: { endpoint_id: WHE, from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00Z' } });
    expect(r.stdout).toBe('requeued  3\n');
  });

  it('dlq status prints each queue with its count and its oldest messages', async () => {
    stub.enqueue(
      ok([
        { service: 'webhook-dispatch', queue: 'webhook-dispatch.dlq', available: true, count: 2, oldest: [{ id: 'wev_1', type: 'booking.created', routing_key: 'booking.created', attempts: 8, first_failed_at: T, last_error: 'timeout' }] },
        { service: 'booking', queue: 'booking.dlq', available: false, count: 0, oldest: [] },
      ]),
    );
    const r = await run('dlq', 'status', '--limit', '5');
    expect(last()).toMatchObject({ method: 'GET', path: '/admin/v1/dead-letters' });
    expect(Object.fromEntries(last().query)).toEqual({ limit: '5' });
    expect(r.stdout).toMatch(/^SERVICE\s+QUEUE\s+AVAILABLE\s+COUNT\s+OLDEST_FAILED_AT$/m);
    expect(r.stdout).toMatch(/^webhook-dispatch\s+webhook-dispatch\.dlq\s+true\s+2\s+2026-11-22T09:30:00\.000Z$/m);
    expect(r.stdout).toMatch(/^booking\s+booking\.dlq\s+false\s+0\s+-$/m);
    expect(r.stdout).toMatch(/oldest in webhook-dispatch\.dlq:\n {2}ID\s+TYPE\s+ROUTING_KEY\s+ATTEMPTS\s+FIRST_FAILED_AT\s+LAST_ERROR\n {2}wev_1/);
  });

  it('dlq replay <queue> reads the count, shows a progress line on stderr and the result on stdout', async () => {
    const status = ok([{ service: 'webhook-dispatch', queue: 'webhook-dispatch.dlq', available: true, count: 5, oldest: [] }]);
    stub.enqueue(status, ok({ service: 'webhook-dispatch', queue: 'webhook-dispatch.dlq', replayed: 5 }));
    const r = await run('dlq', 'replay', 'webhook-dispatch');
    expect(r.code).toBe(0);
    expect(stub.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /admin/v1/dead-letters', 'POST /admin/v1/dead-letters/webhook-dispatch/replay']);
    expect(last().body).toBe('');
    expect(r.stderr).toMatch(/^replaying 5 dead letters from webhook-dispatch … \d+ s\n$/);
    expect(r.stdout).toBe('moved 5 of 5 dead letters from webhook-dispatch back to their queue\n');

    stub.enqueue(status, ok({ service: 'webhook-dispatch', queue: 'webhook-dispatch.dlq', replayed: 2 }));
    const capped = await run('dlq', 'replay', 'webhook-dispatch', '--max', '2');
    expect(last().json).toEqual({ max: 2 });
    expect(capped.stdout).toBe('moved 2 of 2 dead letters from webhook-dispatch back to their queue\n');
  });
});
