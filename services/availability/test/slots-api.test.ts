import { slotListResponseSchema } from '@sched/contracts';
import { startSystem, Tenant, type System } from './support/system';

// Monday 2026-06-01, 00:00 UTC: the service's clock in this file, so Slots are deterministic.
const NOW = new Date('2026-06-01T00:00:00.000Z');
const MONDAY = '2026-06-08';

let sys: System;
let t: Tenant;
let evt: string;
let hostId: string;

beforeAll(async () => {
  sys = await startSystem({ now: () => NOW, busyTimeoutMs: 300 });
  t = await Tenant.create(sys);
  ({ eventTypeId: evt, hostId } = await t.bookable());
});

afterAll(async () => {
  await sys?.close();
});

const slots = (query: string, id = evt, tenant = t) => tenant.v1('GET', `/v1/event-types/${id}/slots${query}`);
const day = (from = MONDAY, to = from, tz = 'Europe/Berlin') => `?from=${from}&to=${to}&timezone=${encodeURIComponent(tz)}`;
const detailsOf = async (query: string) => {
  const res = await slots(query);
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  return res.body.error.details;
};

describe('GET /v1/event-types/{eventType}/slots', () => {
  it('answers a plain Slots GET on the fast path, before express (libs/http fast-path.ts); other requests go to express', async () => {
    const fastPathTotal = async () => (await sys.service.http.registry.getSingleMetric('http_fast_path_requests_total')!.get()).values[0]?.value ?? 0;
    const before = await fastPathTotal();
    const res = await slots(day());
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(16);
    expect(await fastPathTotal()).toBe(before + 1);
    expect((await t.v1('GET', `/v1/event-types/${evt}`)).status).toBe(200);
    expect((await slots(`${day()}&x=%C3%A9`)).status).toBe(400);
    expect(await fastPathTotal()).toBe(before + 1);
  });

  it('lists a Berlin host\'s Monday 09:00–17:00 as 16 half-hour Slots, ascending, in the contract\'s exact shape', async () => {
    const res = await slots(day());
    expect(res.status).toBe(200);
    slotListResponseSchema.parse(res.body);
    expect(res.body.meta).toEqual({ request_id: expect.any(String) });
    expect(res.body.data).toHaveLength(16);
    expect(res.body.data[0]).toEqual({
      start_at: '2026-06-08T07:00:00.000Z',
      end_at: '2026-06-08T07:30:00.000Z',
      local_start_at: '2026-06-08T09:00:00.000+02:00',
      local_end_at: '2026-06-08T09:30:00.000+02:00',
      timezone: 'Europe/Berlin',
    });
    const starts = res.body.data.map((s: any) => s.start_at);
    expect([...starts].sort()).toEqual(starts);
  });

  it('shows the same Slots in another requested timezone with only the local fields changed', async () => {
    const berlin = (await slots(day())).body.data;
    // Tokyo's 8th and 9th cover Berlin's whole Monday (and part of Tuesday, also a working day).
    const tokyo = (await slots(day('2026-06-08', '2026-06-09', 'Asia/Tokyo'))).body.data.filter((s: any) => s.start_at < '2026-06-09');
    expect(tokyo.map((s: any) => [s.start_at, s.end_at])).toEqual(berlin.map((s: any) => [s.start_at, s.end_at]));
    expect(tokyo[0].local_start_at).toBe('2026-06-08T16:00:00.000+09:00');
  });

  it('asks calendar-sync for this workspace and host only over the span the Slots can touch, and leaves its busy time out', async () => {
    sys.calendar.behave(hostId, { kind: 'busy', intervals: [{ start_at: '2026-06-08T08:10:00.000Z', end_at: '2026-06-08T08:20:00.000Z' }] });
    try {
      const res = await slots(day());
      expect(res.body.data.map((s: any) => s.local_start_at.slice(11, 16))).not.toContain('10:00');
      expect(res.body.data).toHaveLength(15);
      expect(sys.calendar.requests.at(-1)).toEqual({ workspaceId: t.ws, hostId, from: '2026-06-08T07:00:00.000Z', to: '2026-06-08T15:00:00.000Z' });
    } finally {
      sys.calendar.behave(hostId, { kind: 'busy', intervals: [] });
    }
  });

  it('answers 409 event_type_not_bookable for an inactive Event Type and when calendar-sync knows no connection (404)', async () => {
    const inactive = await t.eventType(hostId, { status: 'inactive' });
    const res = await slots(day(), inactive);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('event_type_not_bookable');
    sys.calendar.behave(hostId, { kind: 'status', status: 404 });
    try {
      expect((await slots(day())).body.error.code).toBe('event_type_not_bookable');
    } finally {
      sys.calendar.behave(hostId, { kind: 'busy', intervals: [] });
    }
  });

  it('answers 404 for an unknown id and for another workspace\'s id alike', async () => {
    const t2 = await Tenant.create(sys);
    const foreign = await slots(day(), evt, t2);
    const unknown = await slots(day(), 'evt_neverexisted000000000000', t2);
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body, meta: null }).toEqual({ ...unknown.body, meta: null });
  });
});

describe('fail closed: 503 calendar_unavailable with Retry-After', () => {
  afterEach(() => sys.calendar.behave(hostId, { kind: 'busy', intervals: [] }));

  it('passes on calendar-sync\'s 503 and its Retry-After', async () => {
    sys.calendar.behave(hostId, { kind: 'status', status: 503, retryAfter: '7' });
    const res = await slots(day());
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.body.error).toMatchObject({ code: 'calendar_unavailable', details: [] });
  });

  it('reads calendar-sync\'s Retry-After as an HTTP date too, and answers 5 s for one unreadable or outside 1 s to 1 h', async () => {
    sys.calendar.behave(hostId, { kind: 'status', status: 503, retryAfter: new Date(Date.now() + 30_000).toUTCString() });
    const dated = await slots(day());
    expect(dated.status).toBe(503);
    expect(Number(dated.headers.get('retry-after'))).toBeGreaterThanOrEqual(20);
    expect(Number(dated.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    for (const retryAfter of ['soon', '-3', '0', '7200']) {
      sys.calendar.behave(hostId, { kind: 'status', status: 503, retryAfter });
      const res = await slots(day());
      expect([retryAfter, res.status, res.headers.get('retry-after')]).toEqual([retryAfter, 503, '5']);
    }
  });

  it('fails closed on a 500, a malformed answer and an answer slower than BUSY_TIMEOUT_MS', async () => {
    for (const behaviour of [{ kind: 'status', status: 500 }, { kind: 'garbage' }, { kind: 'slow', ms: 800 }] as const) {
      sys.calendar.behave(hostId, behaviour);
      const res = await slots(day());
      expect([behaviour.kind, res.status, res.body.error?.code]).toEqual([behaviour.kind, 503, 'calendar_unavailable']);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('fails closed while calendar-sync is down, and recovers when it is back', async () => {
    await sys.calendar.pause();
    try {
      const res = await slots(day());
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
    } finally {
      await sys.calendar.resume();
    }
    expect((await slots(day())).status).toBe(200);
  });
});

describe('validation of the Slots query (each rule fails with 400 naming the field; each boundary passes)', () => {
  it('accepts 62 dates and refuses 63', async () => {
    expect((await slots(day('2026-06-01', '2026-08-01'))).status).toBe(200);
    expect(await detailsOf(day('2026-06-01', '2026-08-02'))).toEqual([{ field: 'to', issue: 'out_of_range' }]);
  });

  it('accepts to equal to from and refuses to before from', async () => {
    expect((await slots(day('2026-06-08', '2026-06-08'))).status).toBe(200);
    expect(await detailsOf(day('2026-06-08', '2026-06-07'))).toEqual([{ field: 'to', issue: 'out_of_range' }]);
  });

  it('refuses an unknown timezone, a bad or impossible date, a missing parameter, an unknown one and a repeated one', async () => {
    expect(await detailsOf(day(MONDAY, MONDAY, 'Europe/Atlantis'))).toEqual([{ field: 'timezone', issue: 'invalid_value' }]);
    expect(await detailsOf(day('2026-6-8', MONDAY))).toEqual([{ field: 'from', issue: 'invalid_format' }]);
    expect(await detailsOf(day(MONDAY, '2026-02-30'))).toEqual([{ field: 'to', issue: 'invalid_format' }]);
    expect(await detailsOf(`?from=${MONDAY}&to=${MONDAY}`)).toEqual([{ field: 'timezone', issue: 'required' }]);
    expect(await detailsOf(`${day()}&limit=5`)).toEqual([{ field: 'limit', issue: 'unknown_field' }]);
    expect(await detailsOf(`${day()}&from=${MONDAY}`)).toEqual([{ field: 'from', issue: 'duplicate' }]);
  });

  it('checks the query before the resource: a bad query on an unknown Event Type is still 400', async () => {
    const res = await slots('?from=x', 'evt_neverexisted000000000000');
    expect(res.status).toBe(400);
  });
});
