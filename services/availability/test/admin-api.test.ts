import { adminEventTypeSchema, hostSchema, internalHostSchema, scheduleSchema } from '@sched/contracts';
import { call, startSystem, Tenant, type System } from './support/system';
import { internalAuthorization } from '@sched/testing';

let sys: System;
let t: Tenant;

beforeAll(async () => {
  sys = await startSystem();
  t = await Tenant.create(sys);
});

afterAll(async () => {
  await sys?.close();
});

describe('hosts (admin API through the gateway)', () => {
  it('creates a host, reads it, lists it and patches it; every answer matches the AdminHost schema', async () => {
    const created = await t.admin('POST', '/hosts', { name: 'Ada', email: 'ada@example.com', timezone: 'Europe/Berlin', conferencing_url_template: 'https://meet.example.com/{booking_id}' });
    expect(created.status).toBe(201);
    expect(hostSchema.parse(created.body.data)).toMatchObject({ workspace_id: t.ws, timezone: 'Europe/Berlin', conferencing_url_template: 'https://meet.example.com/{booking_id}' });
    const id = created.body.data.id;
    expect((await t.admin('GET', `/hosts/${id}`)).body.data).toEqual(created.body.data);
    const list = await t.admin('GET', '/hosts');
    expect(list.body.data.map((h: any) => h.id)).toContain(id);
    expect(list.body.meta).toEqual({ request_id: expect.any(String), next_cursor: null });
    const patched = await t.admin('PATCH', `/hosts/${id}`, { timezone: 'America/New_York', conferencing_url_template: null });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ timezone: 'America/New_York', conferencing_url_template: null, name: 'Ada' });
  });

  it('refuses bad host input with 400 naming the field: unknown zone, bad email, template without {booking_id}, unknown field, empty patch', async () => {
    const bad = async (method: string, path: string, json: unknown) => (await t.admin(method, path, json)).body.error;
    expect((await bad('POST', '/hosts', { name: 'A', email: 'a@example.com', timezone: 'Mars/Base' })).details).toEqual([{ field: 'timezone', issue: 'invalid_value' }]);
    expect((await bad('POST', '/hosts', { name: 'A', email: 'not-an-email', timezone: 'UTC' })).details).toEqual([{ field: 'email', issue: 'invalid_format' }]);
    expect((await bad('POST', '/hosts', { name: 'A', email: 'a@example.com', timezone: 'UTC', conferencing_url_template: 'https://x.example.com/' })).details).toEqual([
      { field: 'conferencing_url_template', issue: 'invalid_format' },
    ]);
    expect((await bad('POST', '/hosts', { name: 'A', email: 'a@example.com', timezone: 'UTC', colour: 'red' })).details).toEqual([{ field: 'colour', issue: 'unknown_field' }]);
    const id = await t.host();
    expect((await bad('PATCH', `/hosts/${id}`, {})).details).toEqual([{ field: 'body', issue: 'required' }]);
  });

  it('pages the host list with a signed cursor', async () => {
    const other = await Tenant.create(sys);
    const ids = [await other.host(), await other.host(), await other.host()];
    const first = await other.admin('GET', '/hosts?limit=2');
    expect(first.body.data.map((h: any) => h.id)).toEqual(ids.slice(0, 2));
    const second = await other.admin('GET', `/hosts?limit=2&cursor=${encodeURIComponent(first.body.meta.next_cursor)}`);
    expect(second.body.data.map((h: any) => h.id)).toEqual(ids.slice(2));
    expect(second.body.meta.next_cursor).toBeNull();
  });
});

describe('schedules', () => {
  it('starts empty, is replaced whole by PUT, and reads back as written (overrides sorted by date)', async () => {
    const id = await t.host();
    const empty = await t.admin('GET', `/hosts/${id}/schedule`);
    expect(empty.body.data).toMatchObject({ host_id: id, weekly: {}, overrides: [] });
    const body = {
      weekly: { mon: [{ start: '09:00', end: '12:00' }, { start: '13:00', end: '17:00' }], sun: [{ start: '22:00', end: '24:00' }] },
      overrides: [
        { date: '2026-12-31', intervals: [{ start: '10:00', end: '11:00' }] },
        { date: '2026-12-24', intervals: [] },
      ],
    };
    const put = await t.admin('PUT', `/hosts/${id}/schedule`, body);
    expect(put.status).toBe(200);
    expect(scheduleSchema.parse(put.body.data)).toMatchObject({ weekly: body.weekly, overrides: [body.overrides[1], body.overrides[0]] });
    expect((await t.admin('GET', `/hosts/${id}/schedule`)).body.data).toEqual(put.body.data);
  });

  it('refuses overlapping intervals, end before start, bad times and repeated override dates, naming the field', async () => {
    const id = await t.host();
    const details = async (json: unknown) => (await t.admin('PUT', `/hosts/${id}/schedule`, json)).body.error.details;
    expect(await details({ weekly: { mon: [{ start: '09:00', end: '12:00' }, { start: '11:00', end: '13:00' }] } })).toEqual([{ field: 'weekly.mon.1.start', issue: 'overlap' }]);
    expect(await details({ weekly: { tue: [{ start: '12:00', end: '09:00' }] } })).toEqual([{ field: 'weekly.tue.0.end', issue: 'out_of_range' }]);
    expect(await details({ weekly: { wed: [{ start: '24:00', end: '24:00' }] } })).toEqual([{ field: 'weekly.wed.0.start', issue: 'invalid_format' }]);
    expect(
      await details({ weekly: {}, overrides: [{ date: '2026-12-24', intervals: [] }, { date: '2026-12-24', intervals: [] }] }),
    ).toEqual([{ field: 'overrides.1.date', issue: 'duplicate' }]);
    expect(await details({ weekly: {}, overrides: [{ date: '2026-02-30', intervals: [] }] })).toEqual([{ field: 'overrides.0.date', issue: 'invalid_format' }]);
  });
});

describe('event types (admin)', () => {
  it('creates with the defaults of contracts, shows access and the computed bookable, and patches any writable field', async () => {
    const hostId = await t.host();
    const created = await t.admin('POST', '/event-types', { host_id: hostId, name: 'Demo', slug: 'demo', duration_minutes: 45, meeting_type: 'phone' });
    expect(created.status).toBe(201);
    expect(adminEventTypeSchema.parse(created.body.data)).toMatchObject({
      host_id: hostId,
      slot_interval_minutes: 45,
      buffer_before_minutes: 0,
      maximum_advance_minutes: 86_400,
      status: 'active',
      access: 'public',
      bookable: false,
      unavailable_reason: 'calendar_not_connected',
    });
    const id = created.body.data.id;
    const patched = await t.admin('PATCH', `/event-types/${id}`, { access: 'invitation_only', status: 'inactive', description: 'Hello', buffer_after_minutes: 10 });
    expect(patched.body.data).toMatchObject({ access: 'invitation_only', status: 'inactive', description: 'Hello', buffer_after_minutes: 10, unavailable_reason: 'inactive', duration_minutes: 45 });
    expect(new Date(patched.body.data.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(created.body.data.updated_at).getTime());
    expect((await t.admin('GET', `/event-types/${id}`)).body.data).toEqual(patched.body.data);
    expect((await t.admin('GET', '/event-types')).body.data.map((e: any) => e.id)).toContain(id);
  });

  it('refuses a slug already used in the workspace (400 slug taken), on create and on patch, but allows it in another workspace', async () => {
    const hostId = await t.host();
    await t.eventType(hostId, { slug: 'taken' });
    const dup = await t.admin('POST', '/event-types', { host_id: hostId, name: 'X', slug: 'taken', duration_minutes: 30, meeting_type: 'video' });
    expect(dup.status).toBe(400);
    expect(dup.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'slug', issue: 'taken' }] });
    const other = await t.eventType(hostId, { slug: 'free' });
    expect((await t.admin('PATCH', `/event-types/${other}`, { slug: 'taken' })).body.error.details).toEqual([{ field: 'slug', issue: 'taken' }]);
    const t2 = await Tenant.create(sys);
    expect(await t2.eventType(await t2.host(), { slug: 'taken' })).toMatch(/^evt_/);
  });

  it('answers 422 invalid_reference for a host of another workspace or none at all, and 400 for broken rules', async () => {
    const t2 = await Tenant.create(sys);
    const foreignHost = await t2.host();
    for (const hostId of [foreignHost, 'hst_doesnotexist0000000000']) {
      const res = await t.admin('POST', '/event-types', { host_id: hostId, name: 'X', slug: 'x', duration_minutes: 30, meeting_type: 'video' });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'invalid_reference', details: [{ field: 'host_id', issue: 'not_found' }] });
    }
    const hostId = await t.host();
    const bad = await t.admin('POST', '/event-types', { host_id: hostId, name: '', slug: 'Bad Slug', duration_minutes: 0, meeting_type: 'fax', bookable: true });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'name', issue: 'too_short' },
        { field: 'slug', issue: 'invalid_format' },
        { field: 'duration_minutes', issue: 'out_of_range' },
        { field: 'meeting_type', issue: 'invalid_value' },
        { field: 'bookable', issue: 'unknown_field' },
      ]),
    );
    const evt = await t.eventType(hostId);
    // host_id is set at creation only: a PATCH naming it is refused.
    expect((await t.admin('PATCH', `/event-types/${evt}`, { host_id: foreignHost })).body.error.details).toContainEqual({ field: 'host_id', issue: 'unknown_field' });
  });
});

describe('workspace isolation and the forwarded workspace header', () => {
  it('answers 404 for another workspace\'s host and Event Type ids, identical to unknown ids but for request_id', async () => {
    const t2 = await Tenant.create(sys);
    const hostId = await t2.host();
    const evt = await t2.eventType(hostId);
    for (const path of [`/hosts/${hostId}`, `/hosts/${hostId}/schedule`, `/event-types/${evt}`]) {
      const foreign = await t.admin('GET', path);
      const unknown = await t.admin('GET', path.replace(/(hst|evt)_[A-Za-z0-9_-]+/, '$1_unknownunknownunknown00'));
      expect(foreign.status).toBe(404);
      expect({ ...foreign.body, meta: null }).toEqual({ ...unknown.body, meta: null });
    }
    expect((await t.admin('PUT', `/hosts/${hostId}/schedule`, { weekly: {} })).status).toBe(404);
    expect((await t.admin('PATCH', `/event-types/${evt}`, { name: 'mine now' })).status).toBe(404);
  });

  it('believes only the internal credential: none → 401, one for another workspace than the path → 403, a forged x-workspace-id changes nothing', async () => {
    const hostId = await t.host();
    const path = `/admin/v1/workspaces/${t.ws}/hosts/${hostId}`;
    const none = await fetch(`${sys.serviceUrl}${path}`, { headers: { 'x-workspace-id': t.ws } });
    expect(none.status).toBe(401);
    const otherWorkspace = await call(sys.serviceUrl, 'GET', path, { headers: await internalAuthorization('availability', { principal: 'admin', workspaceId: 'wsp_someoneelse000000000000' }) });
    expect([otherWorkspace.status, otherWorkspace.body.error.code]).toEqual([403, 'forbidden']);
    const forged = await call(sys.serviceUrl, 'GET', path, { headers: { 'x-workspace-id': 'wsp_someoneelse000000000000' } });
    expect(forged.status).toBe(200);
  });
});

describe('internal host API for calendar-sync', () => {
  it('returns the InternalHost of a host in the workspace of the path, and 404 for any other workspace', async () => {
    const hostId = await t.host({ conferencing_url_template: 'https://meet.example.com/{booking_id}' });
    const res = await call(sys.serviceUrl, 'GET', `/internal/v1/workspaces/${t.ws}/hosts/${hostId}`);
    expect(res.status).toBe(200);
    expect(internalHostSchema.parse(res.body.data)).toEqual({
      id: hostId,
      name: 'Ada',
      email: 'ada@example.com',
      timezone: 'Europe/Berlin',
      conferencing_url_template: 'https://meet.example.com/{booking_id}',
    });
    expect((await call(sys.serviceUrl, 'GET', `/internal/v1/workspaces/wsp_otherworkspace00000000/hosts/${hostId}`)).status).toBe(404);
  });
});
