import {
  createApiKeyBodySchema,
  createEventTypeBodySchema,
  createHostBodySchema,
  createWebhookEndpointBodySchema,
  createWorkspaceBodySchema,
  fillConferencingUrl,
  listWebhookDeliveriesQuerySchema,
  patchEventTypeBodySchema,
  putCalendarConnectionBodySchema,
  putScheduleBodySchema,
  SCOPES,
} from '../src';
import { details, ok } from './helpers';

describe('admin: workspaces and API keys', () => {
  it('workspace name is 1 to 120 characters', () => {
    ok(createWorkspaceBodySchema, { name: 'x'.repeat(120) });
    expect(details(createWorkspaceBodySchema, { name: 'x'.repeat(121) })).toEqual([{ field: 'name', issue: 'too_long' }]);
    expect(details(createWorkspaceBodySchema, { name: '' })).toEqual([{ field: 'name', issue: 'too_short' }]);
    expect(details(createWorkspaceBodySchema, { name: 'a', plan: 'pro' })).toEqual([{ field: 'plan', issue: 'unknown_field' }]);
  });

  const key = { name: 'integration', scopes: ['bookings:read'] };
  it('API key scopes are non-empty, known and unique', () => {
    ok(createApiKeyBodySchema, { ...key, scopes: [...SCOPES] });
    expect(details(createApiKeyBodySchema, { ...key, scopes: [] })).toEqual([{ field: 'scopes', issue: 'too_short' }]);
    expect(details(createApiKeyBodySchema, { ...key, scopes: ['bookings:delete'] })).toEqual([{ field: 'scopes.0', issue: 'invalid_value' }]);
    expect(details(createApiKeyBodySchema, { ...key, scopes: ['bookings:read', 'slots:read', 'bookings:read'] })).toEqual([
      { field: 'scopes.2', issue: 'duplicate' },
    ]);
  });

  it('API key rate_limit: limit 1..100000, window_seconds 1..3600; expires_at is a timestamp', () => {
    ok(createApiKeyBodySchema, { ...key, rate_limit: { limit: 1, window_seconds: 1 } });
    ok(createApiKeyBodySchema, { ...key, rate_limit: { limit: 100_000, window_seconds: 3600 }, expires_at: '2027-01-01T00:00:00Z' });
    ok(createApiKeyBodySchema, { ...key, rate_limit: null, expires_at: null });
    expect(details(createApiKeyBodySchema, { ...key, rate_limit: { limit: 0, window_seconds: 3601 } })).toEqual([
      { field: 'rate_limit.limit', issue: 'out_of_range' },
      { field: 'rate_limit.window_seconds', issue: 'out_of_range' },
    ]);
    expect(details(createApiKeyBodySchema, { ...key, rate_limit: { limit: 100_001, window_seconds: 0 } })).toEqual([
      { field: 'rate_limit.limit', issue: 'out_of_range' },
      { field: 'rate_limit.window_seconds', issue: 'out_of_range' },
    ]);
    expect(details(createApiKeyBodySchema, { ...key, expires_at: '2027-01-01T00:00:00+02:00' })).toEqual([
      { field: 'expires_at', issue: 'invalid_format' },
    ]);
  });
});

describe('admin: hosts, schedules and calendars', () => {
  const host = { name: 'Grace', email: 'grace@example.com', timezone: 'America/New_York' };

  it('host needs name, email and timezone; the template is an http(s) URL with {booking_id}', () => {
    ok(createHostBodySchema, host);
    ok(createHostBodySchema, { ...host, conferencing_url_template: 'https://meet.example.com/{booking_id}' });
    ok(createHostBodySchema, { ...host, conferencing_url_template: 'http://localhost:9000/room?id={booking_id}' });
    ok(createHostBodySchema, { ...host, conferencing_url_template: null });
    for (const bad of ['https://meet.example.com/room', 'ftp://x.example.com/{booking_id}', '{booking_id}', 'not a url {booking_id}']) {
      expect(details(createHostBodySchema, { ...host, conferencing_url_template: bad })).toEqual([
        { field: 'conferencing_url_template', issue: 'invalid_format' },
      ]);
    }
    expect(details(createHostBodySchema, { ...host, timezone: 'Mars/Olympus' })).toEqual([{ field: 'timezone', issue: 'invalid_value' }]);
    expect(details(createHostBodySchema, { ...host, email: 'grace' })).toEqual([{ field: 'email', issue: 'invalid_format' }]);
  });

  it('fills the conferencing template', () => {
    expect(fillConferencingUrl('https://meet.example.com/{booking_id}?r={booking_id}', 'bkg_1')).toBe('https://meet.example.com/bkg_1?r=bkg_1');
  });

  it('schedule: valid weekly intervals, 24:00 end, touching intervals, overrides', () => {
    const body = putScheduleBodySchema.parse({
      weekly: { mon: [{ start: '09:00', end: '12:00' }, { start: '12:00', end: '17:00' }], sun: [{ start: '22:00', end: '24:00' }] },
    });
    expect(body.overrides).toEqual([]);
    ok(putScheduleBodySchema, {
      weekly: {},
      overrides: [
        { date: '2026-12-24', intervals: [] },
        { date: '2026-12-31', intervals: [{ start: '00:00', end: '01:00' }] },
      ],
    });
  });

  it('schedule: start before end, valid times, no overlap, no duplicate override date', () => {
    expect(details(putScheduleBodySchema, { weekly: { mon: [{ start: '10:00', end: '10:00' }] } })).toEqual([
      { field: 'weekly.mon.0.end', issue: 'out_of_range' },
    ]);
    expect(details(putScheduleBodySchema, { weekly: { tue: [{ start: '24:00', end: '24:00' }] } })).toEqual([
      { field: 'weekly.tue.0.start', issue: 'invalid_format' },
    ]);
    expect(details(putScheduleBodySchema, { weekly: { tue: [{ start: '9:00', end: '24:01' }] } })).toEqual([
      { field: 'weekly.tue.0.start', issue: 'invalid_format' },
      { field: 'weekly.tue.0.end', issue: 'invalid_format' },
    ]);
    expect(
      details(putScheduleBodySchema, {
        weekly: { wed: [{ start: '13:00', end: '15:00' }, { start: '09:00', end: '13:30' }] },
      }),
    ).toEqual([{ field: 'weekly.wed.0.start', issue: 'overlap' }]);
    expect(
      details(putScheduleBodySchema, {
        weekly: {},
        overrides: [
          { date: '2026-12-24', intervals: [] },
          { date: '2026-12-24', intervals: [] },
        ],
      }),
    ).toEqual([{ field: 'overrides.1.date', issue: 'duplicate' }]);
    expect(details(putScheduleBodySchema, { weekly: { monday: [] } })).toEqual([{ field: 'weekly.monday', issue: 'unknown_field' }]);
    expect(details(putScheduleBodySchema, { weekly: {}, overrides: [{ date: '2026-02-30', intervals: [] }] })).toEqual([
      { field: 'overrides.0.date', issue: 'invalid_format' },
    ]);
  });

  it('calendar connection: caldav with http(s) URLs and credentials', () => {
    const cal = { provider: 'caldav', url: 'https://dav.example.com/', username: 'u', password: 'p' };
    ok(putCalendarConnectionBodySchema, cal);
    ok(putCalendarConnectionBodySchema, { ...cal, calendar_url: 'https://dav.example.com/cal/u/work/' });
    expect(details(putCalendarConnectionBodySchema, { ...cal, provider: 'google' })).toEqual([{ field: 'provider', issue: 'invalid_value' }]);
    expect(details(putCalendarConnectionBodySchema, { ...cal, url: 'dav.example.com' })).toEqual([{ field: 'url', issue: 'invalid_format' }]);
    expect(details(putCalendarConnectionBodySchema, { ...cal, password: '' })).toEqual([{ field: 'password', issue: 'too_short' }]);
  });
});

describe('admin: event types', () => {
  const base = { host_id: 'hst_0123456789abcdefghijkl', name: 'Intro call', slug: 'intro-call', duration_minutes: 30, meeting_type: 'video' };

  it('fills the defaults, slot interval from the duration', () => {
    expect(createEventTypeBodySchema.parse(base)).toEqual({
      ...base,
      description: null,
      slot_interval_minutes: 30,
      buffer_before_minutes: 0,
      buffer_after_minutes: 0,
      minimum_notice_minutes: 0,
      maximum_advance_minutes: 86_400,
      status: 'active',
      access: 'public',
    });
    expect(createEventTypeBodySchema.parse({ ...base, slot_interval_minutes: 15 }).slot_interval_minutes).toBe(15);
  });

  it.each([
    ['name', 'x'.repeat(120), 'x'.repeat(121), 'too_long'],
    ['slug', 's'.repeat(60), 's'.repeat(61), 'too_long'],
    ['description', 'd'.repeat(2000), 'd'.repeat(2001), 'too_long'],
    ['duration_minutes', 1440, 1441, 'out_of_range'],
    ['duration_minutes', 1, 0, 'out_of_range'],
    ['slot_interval_minutes', 1440, 1441, 'out_of_range'],
    ['slot_interval_minutes', 1, 0, 'out_of_range'],
    ['buffer_before_minutes', 0, -1, 'out_of_range'],
    ['buffer_after_minutes', 1440, 1441, 'out_of_range'],
    ['minimum_notice_minutes', 525_600, 525_601, 'out_of_range'],
    ['maximum_advance_minutes', 525_600, 525_601, 'out_of_range'],
    ['maximum_advance_minutes', 1, 0, 'out_of_range'],
  ])('%s: %j passes, %j is %s', (field, good, bad, issue) => {
    ok(createEventTypeBodySchema, { ...base, [field]: good });
    expect(details(createEventTypeBodySchema, { ...base, [field]: bad })).toEqual([{ field, issue }]);
    ok(patchEventTypeBodySchema, { [field]: good });
    expect(details(patchEventTypeBodySchema, { [field]: bad })).toEqual([{ field, issue }]);
  });

  it('slug is [a-z0-9-] only; names need a character', () => {
    expect(details(createEventTypeBodySchema, { ...base, slug: 'Intro_Call' })).toEqual([{ field: 'slug', issue: 'invalid_format' }]);
    expect(details(createEventTypeBodySchema, { ...base, slug: '' })).toEqual([{ field: 'slug', issue: 'too_short' }]);
    expect(details(createEventTypeBodySchema, { ...base, name: '' })).toEqual([{ field: 'name', issue: 'too_short' }]);
  });

  it('checks enums and refuses read-only fields', () => {
    expect(details(createEventTypeBodySchema, { ...base, meeting_type: 'zoom' })).toEqual([{ field: 'meeting_type', issue: 'invalid_value' }]);
    expect(details(createEventTypeBodySchema, { ...base, access: 'private' })).toEqual([{ field: 'access', issue: 'invalid_value' }]);
    expect(details(createEventTypeBodySchema, { ...base, bookable: true })).toEqual([{ field: 'bookable', issue: 'unknown_field' }]);
    // host_id is set at creation only; with no writable field left the patch is also empty.
    expect(details(patchEventTypeBodySchema, { host_id: 'hst_x' })).toEqual([
      { field: 'host_id', issue: 'unknown_field' },
      { field: '', issue: 'required' },
    ]);
    expect(details(patchEventTypeBodySchema, { name: 'x', id: 'evt_x' })).toEqual([{ field: 'id', issue: 'unknown_field' }]);
  });

  it('patch needs at least one field and may clear the description', () => {
    expect(details(patchEventTypeBodySchema, {})).toEqual([{ field: '', issue: 'required' }]);
    expect(patchEventTypeBodySchema.parse({ description: null })).toEqual({ description: null });
    expect(patchEventTypeBodySchema.parse({ status: 'inactive' })).toEqual({ status: 'inactive' });
  });
});

describe('admin: webhook endpoints', () => {
  it('events are a non-empty set of public kinds', () => {
    ok(createWebhookEndpointBodySchema, { url: 'https://hooks.example.com/in', events: ['booking.created', 'calendar.failed'] });
    expect(details(createWebhookEndpointBodySchema, { url: 'https://hooks.example.com/in', events: [] })).toEqual([
      { field: 'events', issue: 'too_short' },
    ]);
    expect(details(createWebhookEndpointBodySchema, { url: 'https://hooks.example.com/in', events: ['calendar.synced'] })).toEqual([
      { field: 'events.0', issue: 'invalid_value' },
    ]);
    expect(
      details(createWebhookEndpointBodySchema, { url: 'https://hooks.example.com/in', events: ['booking.created', 'booking.created'] }),
    ).toEqual([{ field: 'events.1', issue: 'duplicate' }]);
    expect(details(createWebhookEndpointBodySchema, { url: 'mailto:x@example.com', events: ['booking.created'] })).toEqual([
      { field: 'url', issue: 'invalid_format' },
    ]);
    expect(details(createWebhookEndpointBodySchema, { url: `https://h.example.com/${'p'.repeat(2048)}`, events: ['booking.created'] })).toEqual([
      { field: 'url', issue: 'too_long' },
    ]);
  });

  it('deliveries can be filtered by status', () => {
    ok(listWebhookDeliveriesQuerySchema, { status: 'failed', limit: '50' });
    expect(details(listWebhookDeliveriesQuerySchema, { status: 'lost' })).toEqual([{ field: 'status', issue: 'invalid_value' }]);
  });
});
