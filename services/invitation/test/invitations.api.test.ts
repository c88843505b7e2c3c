import { eventType } from './support/stubs';
import { call, startPageSystem, type PageSystem } from './support/page-system';

let sys: PageSystem;
let ws: { id: string; slug: string; key: string };
let other: { id: string; slug: string; key: string };
let evt: string;
let publicEvt: string;

const DAY = 86_400_000;
const future = (ms = 7 * DAY) => new Date(Date.now() + ms).toISOString();
const v1 = (method: string, path: string, opts: { json?: unknown; headers?: Record<string, string>; as?: { key: string } } = {}) =>
  call(sys.gateway.url, method, path, { token: (opts.as ?? ws).key, json: opts.json, headers: opts.headers });
const create = (body: Record<string, unknown> = {}, headers?: Record<string, string>) =>
  v1('POST', '/v1/booking-invitations', { json: { event_type_id: evt, expires_at: future(), max_uses: 1, ...body }, headers });
const credentialOf = (url: string) => url.split('/i/')[1]!;
const pageInfo = (credential: string) => call(sys.gateway.url, 'GET', '/book/api/invitation', { headers: { 'x-invitation-credential': credential } });

beforeAll(async () => {
  sys = await startPageSystem();
  ws = await sys.workspace('Acme');
  other = await sys.workspace('Other');
  evt = sys.availability.add(ws.id, eventType({ access: 'invitation_only' })).id;
  publicEvt = sys.availability.add(ws.id, eventType({ access: 'public', slug: 'open' })).id;
  sys.availability.add(other.id, eventType({ access: 'invitation_only' }));
});

afterAll(async () => {
  await sys?.stop();
});

afterEach(() => {
  sys.clock.now = null;
});

describe('create (POST /v1/booking-invitations)', () => {
  it('answers 201 with an active invitation and an invitation_url {BOOKING_PAGE_URL}/i/<credential>, storing only the hash', async () => {
    const res = await create({ email: 'Guest@Example.com', metadata: { crm: 'x1' }, max_uses: 3 });
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(d).toMatchObject({ event_type_id: evt, email: 'Guest@Example.com', max_uses: 3, used_count: 0, status: 'active', metadata: { crm: 'x1' }, revoked_at: null, not_before: null });
    expect(d.id).toMatch(/^biv_/);
    expect(d.invitation_url).toMatch(new RegExp(`^${sys.gateway.url}/book/i/[A-Za-z0-9_-]{43}$`));
    const rows = await sys.db.adminPool.query('SELECT * FROM invitation.invitations WHERE id = $1', [d.id]);
    expect(JSON.stringify(rows.rows)).not.toContain(credentialOf(d.invitation_url));
    expect(rows.rows[0].credential_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses an Event Type that is public, unknown, or of another workspace with 422 invalid_reference', async () => {
    for (const id of [publicEvt, 'evt_doesnotexist0000000000', 'evt_x']) {
      const res = await create({ event_type_id: id });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_reference');
    }
    const theirs = sys.availability.add(other.id, eventType()).id;
    expect((await create({ event_type_id: theirs })).status).toBe(422);
  });

  it('refuses expires_at not in the future and expires_at not after not_before with 400', async () => {
    const T = new Date('2030-01-01T00:00:00.000Z');
    sys.clock.now = T;
    const atNow = await create({ expires_at: T.toISOString() });
    expect(atNow.status).toBe(400);
    expect(atNow.body.error.details).toEqual([{ field: 'expires_at', issue: 'out_of_range' }]);
    expect((await create({ expires_at: '2029-12-31T23:59:59Z' })).status).toBe(400);
    expect((await create({ expires_at: '2030-01-01T00:00:00.001Z' })).status).toBe(201);
    const order = await create({ not_before: '2030-02-01T00:00:00Z', expires_at: '2030-02-01T00:00:00Z' });
    expect(order.status).toBe(400);
    expect(order.body.error.details).toEqual([{ field: 'expires_at', issue: 'out_of_range' }]);
  });

  it('checks every body rule: max_uses 1..100, email ≤ 254, event_type_id ≤ 40, timestamps in UTC, no unknown field', async () => {
    const expectIssue = async (body: Record<string, unknown>, field: string, issue: string) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.details).toContainEqual({ field, issue });
    };
    await expectIssue({ max_uses: 0 }, 'max_uses', 'out_of_range');
    await expectIssue({ max_uses: 101 }, 'max_uses', 'out_of_range');
    await expectIssue({ max_uses: 1.5 }, 'max_uses', 'invalid_type');
    expect((await create({ max_uses: 1 })).status).toBe(201);
    expect((await create({ max_uses: 100 })).status).toBe(201);
    const local = `${'a'.repeat(64)}`;
    const email254 = `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(254 - 64 - 1 - 63 - 1 - 63 - 1)}`;
    expect(email254).toHaveLength(254);
    expect((await create({ email: email254 })).status).toBe(201);
    await expectIssue({ email: `${email254}x` }, 'email', 'too_long');
    await expectIssue({ email: 'not-an-email' }, 'email', 'invalid_format');
    // 40 characters is within the rule (then unknown: 422); 41 is not (400).
    expect((await create({ event_type_id: `evt_${'a'.repeat(36)}` })).status).toBe(422);
    await expectIssue({ event_type_id: `evt_${'a'.repeat(37)}` }, 'event_type_id', 'too_long');
    await expectIssue({ expires_at: '2030-01-01T00:00:00+01:00' }, 'expires_at', 'invalid_format');
    await expectIssue({ expires_at: '2030-02-30T00:00:00Z' }, 'expires_at', 'invalid_format');
    await expectIssue({ colour: 'red' }, 'colour', 'unknown_field');
    await expectIssue({ metadata: { [`${'k'.repeat(41)}`]: 1 } }, 'metadata', 'key_too_long');
    const missing = await v1('POST', '/v1/booking-invitations', { json: {} });
    expect(missing.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'event_type_id', issue: 'required' },
        { field: 'expires_at', issue: 'required' },
        { field: 'max_uses', issue: 'required' },
      ]),
    );
  });
});

describe('idempotent POSTs (decisions.md §4)', () => {
  it('replays a create with the same key: same invitation, same URL, Idempotent-Replayed, one row; stored sealed', async () => {
    const headers = { 'Idempotency-Key': `create-${Date.now()}` };
    const body = { expires_at: future(), max_uses: 2 };
    const first = await create(body, headers);
    const again = await create(body, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
    expect(again.body.meta.request_id).not.toBe(first.body.meta.request_id);
    const rows = await sys.db.adminPool.query('SELECT count(*)::int AS n FROM invitation.invitations WHERE id = $1', [first.body.data.id]);
    expect(rows.rows[0].n).toBe(1);
    const stored = await sys.db.adminPool.query('SELECT sealed, response_body FROM invitation.idempotency_keys');
    expect(stored.rows.length).toBeGreaterThan(0);
    for (const row of stored.rows) {
      expect(row.sealed).toBe(true);
      expect(row.response_body).not.toContain(credentialOf(first.body.data.invitation_url));
    }
    const reused = await create({ ...body, max_uses: 3 }, headers);
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });

  it('replays a reissue with the same URL, and rejects a malformed key with 400', async () => {
    const inv = (await create()).body.data;
    const headers = { 'Idempotency-Key': `reissue-${inv.id}` };
    const first = await v1('POST', `/v1/booking-invitations/${inv.id}/reissue`, { headers });
    const again = await v1('POST', `/v1/booking-invitations/${inv.id}/reissue`, { headers });
    expect(first.status).toBe(200);
    expect(again.body.data.invitation_url).toBe(first.body.data.invitation_url);
    expect((await pageInfo(credentialOf(first.body.data.invitation_url))).status).toBe(200);
    const bad = await create({}, { 'Idempotency-Key': 'x'.repeat(256) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: 'Idempotency-Key', issue: 'too_long' }]);
  });
});

describe('read, revoke and reissue', () => {
  it('reads an invitation without invitation_url; another workspace gets the same 404 as an unknown id', async () => {
    const inv = (await create()).body.data;
    const read = await v1('GET', `/v1/booking-invitations/${inv.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).not.toHaveProperty('invitation_url');
    const { invitation_url: _url, ...withoutUrl } = inv;
    expect(read.body.data).toEqual(withoutUrl);
    const theirs = await v1('GET', `/v1/booking-invitations/${inv.id}`, { as: other });
    const unknown = await v1('GET', '/v1/booking-invitations/biv_unknown0000000000000000');
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(theirs.body.error).toEqual(unknown.body.error);
    expect((await v1('POST', `/v1/booking-invitations/${inv.id}/revoke`, { as: other })).status).toBe(404);
    expect((await v1('POST', `/v1/booking-invitations/${inv.id}/reissue`, { as: other })).status).toBe(404);
  });

  it('revokes from active, not_yet_valid, expired and exhausted, setting revoked_at; a second revoke is 409', async () => {
    const T = new Date('2031-03-01T00:00:00.000Z');
    sys.clock.now = T;
    const active = (await create({ expires_at: '2031-04-01T00:00:00Z' })).body.data;
    const notYet = (await create({ not_before: '2031-03-15T00:00:00Z', expires_at: '2031-04-01T00:00:00Z' })).body.data;
    const expiring = (await create({ expires_at: '2031-03-01T00:00:01Z' })).body.data;
    const exhausted = (await create({ expires_at: '2031-04-01T00:00:00Z' })).body.data;
    await sys.db.adminPool.query('UPDATE invitation.invitations SET used_count = max_uses WHERE id = $1', [exhausted.id]);
    sys.clock.now = new Date('2031-03-02T00:00:00.000Z');
    const states = [
      [active, 'active'],
      [notYet, 'not_yet_valid'],
      [expiring, 'expired'],
      [exhausted, 'exhausted'],
    ] as const;
    for (const [inv, state] of states) {
      expect((await v1('GET', `/v1/booking-invitations/${inv.id}`)).body.data.status).toBe(state);
      const res = await v1('POST', `/v1/booking-invitations/${inv.id}/revoke`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'revoked', revoked_at: '2031-03-02T00:00:00.000Z' });
      expect(res.body.data).not.toHaveProperty('invitation_url');
      const again = await v1('POST', `/v1/booking-invitations/${inv.id}/revoke`);
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('invitation_not_active');
    }
  });

  it('reissues from active and not_yet_valid: new URL, old credential dead at once, used_count kept', async () => {
    const inv = (await create({ max_uses: 5 })).body.data;
    await sys.db.adminPool.query('UPDATE invitation.invitations SET used_count = 2 WHERE id = $1', [inv.id]);
    const oldCredential = credentialOf(inv.invitation_url);
    expect((await pageInfo(oldCredential)).status).toBe(200);
    const res = await v1('POST', `/v1/booking-invitations/${inv.id}/reissue`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: inv.id, used_count: 2, status: 'active' });
    expect(res.body.data.invitation_url).not.toBe(inv.invitation_url);
    expect((await pageInfo(oldCredential)).status).toBe(404);
    expect((await pageInfo(credentialOf(res.body.data.invitation_url))).status).toBe(200);
    const notYet = (await create({ not_before: future(DAY), expires_at: future(2 * DAY) })).body.data;
    expect((await v1('POST', `/v1/booking-invitations/${notYet.id}/reissue`)).status).toBe(200);
  });

  it('refuses to reissue an expired, exhausted or revoked invitation with 409 invitation_not_active', async () => {
    const T = new Date('2032-01-01T00:00:00.000Z');
    sys.clock.now = T;
    const expired = (await create({ expires_at: '2032-01-01T01:00:00Z' })).body.data;
    const exhausted = (await create({ expires_at: '2032-02-01T00:00:00Z' })).body.data;
    const revoked = (await create({ expires_at: '2032-02-01T00:00:00Z' })).body.data;
    await sys.db.adminPool.query('UPDATE invitation.invitations SET used_count = max_uses WHERE id = $1', [exhausted.id]);
    await v1('POST', `/v1/booking-invitations/${revoked.id}/revoke`);
    sys.clock.now = new Date('2032-01-01T01:00:00.000Z');
    for (const [inv, status] of [
      [expired, 'expired'],
      [exhausted, 'exhausted'],
      [revoked, 'revoked'],
    ] as const) {
      const res = await v1('POST', `/v1/booking-invitations/${inv.id}/reissue`);
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'invitation_not_active', details: [{ field: 'status', issue: status }] });
    }
  });

  it('rejects a body on revoke with an unknown field', async () => {
    const inv = (await create()).body.data;
    const res = await v1('POST', `/v1/booking-invitations/${inv.id}/revoke`, { json: { reason: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'reason', issue: 'unknown_field' }]);
  });

  it('refuses a query parameter where the operation takes none (decisions.md §1), changing nothing', async () => {
    const inv = (await create()).body.data;
    for (const [method, path] of [
      ['GET', `/v1/booking-invitations/${inv.id}?expand=url`],
      ['POST', `/v1/booking-invitations/${inv.id}/revoke?force=1`],
      ['POST', `/v1/booking-invitations/${inv.id}/reissue?force=1`],
    ] as const) {
      const res = await v1(method, path);
      expect([path, res.status, res.body.error.details]).toEqual([path, 400, [{ field: path.split('?')[1]!.split('=')[0], issue: 'unknown_field' }]]);
    }
    expect((await v1('GET', `/v1/booking-invitations/${inv.id}`)).body.data.status).toBe('active');
  });
});

describe('list (GET /v1/booking-invitations)', () => {
  let listWs: { id: string; slug: string; key: string };
  let listEvt: string;
  const list = (query = '') => v1('GET', `/v1/booking-invitations${query}`, { as: listWs });

  beforeAll(async () => {
    listWs = await sys.workspace('Lists');
    listEvt = sys.availability.add(listWs.id, eventType()).id;
  });

  it('filters on the effective status at query time, at the exact edges of not_before and expires_at', async () => {
    const T = new Date('2033-05-01T10:00:00.000Z');
    sys.clock.now = T;
    const mk = (body: Record<string, unknown>) =>
      v1('POST', '/v1/booking-invitations', { as: listWs, json: { event_type_id: listEvt, max_uses: 1, ...body } }).then((r) => r.body.data.id as string);
    const opens = await mk({ not_before: '2033-05-01T11:00:00Z', expires_at: '2033-05-01T12:00:00Z' });
    const closes = await mk({ expires_at: '2033-05-01T11:00:00Z' });
    const revoked = await mk({ expires_at: '2033-06-01T00:00:00Z' });
    const exhausted = await mk({ expires_at: '2033-06-01T00:00:00Z' });
    await v1('POST', `/v1/booking-invitations/${revoked}/revoke`, { as: listWs });
    await sys.db.adminPool.query('UPDATE invitation.invitations SET used_count = max_uses WHERE id = $1', [exhausted]);
    const ids = async (status: string) => (await list(`?status=${status}`)).body.data.map((d: any) => d.id).sort();

    expect(await ids('not_yet_valid')).toEqual([opens]);
    expect(await ids('active')).toEqual([closes]);
    expect(await ids('revoked')).toEqual([revoked]);
    expect(await ids('exhausted')).toEqual([exhausted]);
    sys.clock.now = new Date('2033-05-01T10:59:59.999Z');
    expect(await ids('active')).toEqual([closes]);
    // Exactly at not_before the invitation is active; exactly at expires_at it is expired.
    sys.clock.now = new Date('2033-05-01T11:00:00.000Z');
    expect(await ids('active')).toEqual([opens]);
    expect(await ids('expired')).toEqual([closes]);
    expect(await ids('not_yet_valid')).toEqual([]);
    expect((await v1('GET', `/v1/booking-invitations/${opens}`, { as: listWs })).body.data.status).toBe('active');
    expect((await v1('GET', `/v1/booking-invitations/${closes}`, { as: listWs })).body.data.status).toBe('expired');
    sys.clock.now = new Date('2033-05-01T12:00:00.000Z');
    expect((await ids('expired')).sort()).toEqual([opens, closes].sort());
  });

  it('pages by created_at then id descending with signed cursors bound to the filters; default limit 20', async () => {
    const T0 = new Date('2034-01-01T00:00:00.000Z');
    const pageWs = await sys.workspace('Pages');
    const pageEvt = sys.availability.add(pageWs.id, eventType()).id;
    const made: string[] = [];
    for (let i = 0; i < 23; i++) {
      // Two invitations per instant: the id breaks the tie.
      sys.clock.now = new Date(T0.getTime() + Math.floor(i / 2) * 1000);
      const res = await v1('POST', '/v1/booking-invitations', { as: pageWs, json: { event_type_id: pageEvt, max_uses: 1, expires_at: '2035-01-01T00:00:00Z' } });
      made.push(res.body.data.id);
    }
    const get = (q: string) => v1('GET', `/v1/booking-invitations${q}`, { as: pageWs });
    const first = await get('');
    expect(first.body.data).toHaveLength(20);
    expect(first.body.data.every((d: any) => !('invitation_url' in d))).toBe(true);
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await get(`?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      all.push(...res.body.data);
      cursor = res.body.meta.next_cursor;
    } while (cursor);
    expect(all).toHaveLength(23);
    const expected = [...all].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1));
    expect(all.map((d) => d.id)).toEqual(expected.map((d) => d.id));
    expect(new Set(all.map((d) => d.id))).toEqual(new Set(made));

    const withCursor = (await get('?limit=2')).body.meta.next_cursor as string;
    const otherFilter = await get(`?limit=2&status=active&cursor=${encodeURIComponent(withCursor)}`);
    expect(otherFilter.status).toBe(400);
    expect(otherFilter.body.error.details).toEqual([{ field: 'cursor', issue: 'invalid_format' }]);
    const tampered = `${withCursor.slice(0, -2)}${withCursor.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await get(`?cursor=${encodeURIComponent(tampered)}`)).status).toBe(400);
  });

  it('checks limit, cursor, status, event_type_id and unknown parameters', async () => {
    const bad = async (q: string, field: string, issue: string) => {
      const res = await list(q);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toContainEqual({ field, issue });
    };
    await bad('?limit=0', 'limit', 'out_of_range');
    await bad('?limit=101', 'limit', 'out_of_range');
    await bad('?limit=01', 'limit', 'invalid_format');
    expect((await list('?limit=1')).status).toBe(200);
    expect((await list('?limit=100')).status).toBe(200);
    await bad(`?cursor=${'a'.repeat(2049)}`, 'cursor', 'too_long');
    await bad('?cursor=', 'cursor', 'too_short');
    await bad('?status=paused', 'status', 'invalid_value');
    expect((await list(`?event_type_id=${'e'.repeat(40)}`)).status).toBe(200);
    await bad(`?event_type_id=${'e'.repeat(41)}`, 'event_type_id', 'too_long');
    await bad('?sort=asc', 'sort', 'unknown_field');
  });

  it('filters by event_type_id and shows one workspace only its own invitations', async () => {
    const mine = (await list(`?event_type_id=${listEvt}&limit=100`)).body.data;
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((d: any) => d.event_type_id === listEvt)).toBe(true);
    const theirs = (await v1('GET', '/v1/booking-invitations?limit=100', { as: other })).body.data;
    expect(theirs.some((d: any) => mine.some((m: any) => m.id === d.id))).toBe(false);
  });
});
