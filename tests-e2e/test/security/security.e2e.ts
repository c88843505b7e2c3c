import { spawnSync } from 'node:child_process';
import { waitFor } from '@sched/testing';
import { buildOpenApiDocument } from '../../../libs/openapi/src';
import { operationsOf, type Operation } from '../../fuzz/request-generator';
import { startSystem, type System } from '../../support/system';
import { ALL_SCOPES, admin, call, setUpTwoTenants, type World } from '../../support/two-tenants';

/**
 * Security matrix (issue 10) against the whole system as separate processes: authentication
 * and scopes on every v1 operation, admin token on every admin operation, workspace isolation
 * of ids, and no secret in any service's logs or in plain text in the database.
 */

let sys: System;
let world: World;
const ops = operationsOf(buildOpenApiDocument() as Record<string, any>);
const v1Ops = ops.filter((o) => o.kind === 'v1');
const adminOps = ops.filter((o) => o.kind === 'admin');

beforeAll(async () => {
  sys = await startSystem();
  world = await setUpTwoTenants(sys);
}, 300000);

afterAll(async () => {
  await world?.close();
  await sys?.stop();
});

const day = (offset: number) => new Date(Date.now() + offset * 86400000).toISOString().slice(0, 10);

/** A concrete path for an operation: each path id taken from `ids` by parameter name. */
function pathOf(o: Operation, ids: Record<string, string>): string {
  const p = o.template.replace(/\{([^}]+)\}/g, (_m, name: string) => ids[name] ?? 'x_unknown0000000000000000');
  return o.template.endsWith('/slots') ? `${p}?from=${day(1)}&to=${day(2)}&timezone=UTC` : p;
}

/** A body that passes validation, so that the resource check (404) is what answers. */
function validBody(o: Operation): unknown {
  if (o.template.endsWith('/reschedule')) return { start_at: `${day(3)}T10:00:00Z`, expected_version: 1 };
  if (o.template.endsWith('/cancel')) return {};
  return undefined;
}

const unknownIds = {
  booking: 'bkg_AAAAAAAAAAAAAAAAAAAAAAAA',
  eventType: 'evt_AAAAAAAAAAAAAAAAAAAAAAAA',
  bookingInvitation: 'biv_AAAAAAAAAAAAAAAAAAAAAAAA',
  ws: 'wsp_AAAAAAAAAAAAAAAAAAAAAAAA',
  host: 'hst_AAAAAAAAAAAAAAAAAAAAAAAA',
  evt: 'evt_AAAAAAAAAAAAAAAAAAAAAAAA',
  whe: 'whe_AAAAAAAAAAAAAAAAAAAAAAAA',
  bkg: 'bkg_AAAAAAAAAAAAAAAAAAAAAAAA',
  key: 'key_AAAAAAAAAAAAAAAAAAAAAAAA',
  id: 'whd_AAAAAAAAAAAAAAAAAAAAAAAA',
  queue: 'no-such-queue',
};

const scopeOf = (o: Operation): string => (o.op.security as { bearer: string[] }[])[0]!.bearer[0]!;
const label = (o: Operation) => `${o.method} ${o.template}`;

describe('API key authentication and scopes on every v1 operation', () => {
  it('answers 401 unauthenticated with WWW-Authenticate: Bearer when there is no key, or a malformed or unknown one', async () => {
    expect(v1Ops.length).toBeGreaterThanOrEqual(13);
    for (const o of v1Ops) {
      for (const authorization of [undefined, 'Bearer', `Basic ${Buffer.from('a:b').toString('base64')}`, 'Bearer sk_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', `Bearer ${sys.adminToken}`]) {
        const r = await call(sys, o.method, pathOf(o, unknownIds), { headers: authorization ? { authorization } : {} });
        expect({ op: label(o), authorization, status: r.status, code: r.body?.error?.code }).toEqual({ op: label(o), authorization, status: 401, code: 'unauthenticated' });
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    }
  });

  it('answers 403 insufficient_scope naming the scope when the key lacks exactly the scope the operation needs', async () => {
    const keys = new Map<string, string>();
    for (const scope of ALL_SCOPES) {
      const created = await admin(sys, 'POST', `/admin/v1/workspaces/${world.a.workspaceId}/api-keys`, { name: `no ${scope}`, scopes: ALL_SCOPES.filter((s) => s !== scope) });
      keys.set(scope, created.key);
    }
    for (const o of v1Ops) {
      const scope = scopeOf(o);
      const r = await call(sys, o.method, pathOf(o, unknownIds), { token: keys.get(scope)! });
      expect({ op: label(o), status: r.status, error: r.body?.error }).toEqual({
        op: label(o),
        status: 403,
        error: { code: 'insufficient_scope', message: expect.any(String), details: [{ field: 'scope', issue: scope }] },
      });
    }
  });

  it('refuses a revoked key on every operation within 5 s of the revocation', async () => {
    const created = await admin(sys, 'POST', `/admin/v1/workspaces/${world.a.workspaceId}/api-keys`, { name: 'to revoke', scopes: [...ALL_SCOPES] });
    expect((await call(sys, 'GET', '/v1/event-types', { token: created.key })).status).toBe(200);
    await admin(sys, 'POST', `/admin/v1/workspaces/${world.a.workspaceId}/api-keys/${created.id}/revoke`);
    const revokedAt = Date.now();
    // decisions §3: at most 5 s of key cache; the slack is for the polling request itself on a busy machine.
    await waitFor(async () => (await call(sys, 'GET', '/v1/event-types', { token: created.key })).status === 401, { timeoutMs: 6500, intervalMs: 100 });
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(6500);
    for (const o of v1Ops) {
      const r = await call(sys, o.method, pathOf(o, unknownIds), { token: created.key });
      expect({ op: label(o), status: r.status, code: r.body?.error?.code }).toEqual({ op: label(o), status: 401, code: 'unauthenticated' });
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });
});

describe('workspace isolation of ids', () => {
  const strip = (body: any) => ({ ...body, meta: { ...body?.meta, request_id: '<id>' } });

  it('answers an id of another workspace exactly like an unknown id (404, same body but request_id) on every v1 operation with an id', async () => {
    const { b } = world;
    const bIds = { booking: b.bookingIds[0]!, eventType: b.eventTypeId, bookingInvitation: b.invitationId };
    const withIds = v1Ops.filter((o) => o.template.includes('{'));
    expect(withIds.length).toBeGreaterThanOrEqual(7);
    for (const o of withIds) {
      const foreign = await call(sys, o.method, pathOf(o, bIds), { token: world.a.apiKey, body: validBody(o) });
      const unknown = await call(sys, o.method, pathOf(o, unknownIds), { token: world.a.apiKey, body: validBody(o) });
      expect({ op: label(o), status: foreign.status }).toEqual({ op: label(o), status: 404 });
      expect(strip(foreign.body)).toEqual(strip(unknown.body));
      expect(foreign.text).not.toContain(b.workspaceId);
    }
    // And B's resources were left alone by A's attempts.
    const bBooking = await call(sys, 'GET', `/v1/bookings/${b.bookingIds[0]}`, { token: b.apiKey });
    expect(bBooking.body.data).toMatchObject({ status: 'confirmed', version: 1 });
  });

  it('answers an admin path under A’s workspace with an id of B exactly like an unknown id', async () => {
    const { a, b } = world;
    const bIds = { ws: a.workspaceId, host: b.hostId, evt: b.eventTypeId, whe: b.endpointId, bkg: b.bookingIds[0]!, key: b.keyId };
    const scoped = adminOps.filter((o) => o.template.startsWith('/admin/v1/workspaces/{ws}/') && /\{(host|evt|whe|bkg|key)\}/.test(o.template) && o.method !== 'PUT' && o.method !== 'PATCH');
    expect(scoped.length).toBeGreaterThanOrEqual(8);
    for (const o of scoped) {
      const foreign = await call(sys, o.method, pathOf(o, bIds), { token: sys.adminToken });
      const unknown = await call(sys, o.method, pathOf(o, { ...unknownIds, ws: a.workspaceId }), { token: sys.adminToken });
      expect({ op: label(o), status: foreign.status }).toEqual({ op: label(o), status: 404 });
      expect(strip(foreign.body)).toEqual(strip(unknown.body));
    }
    // B's key, endpoint and calendar survived the attempts made under A's workspace.
    expect((await call(sys, 'GET', '/v1/event-types', { token: b.apiKey })).status).toBe(200);
    expect((await admin(sys, 'GET', `/admin/v1/workspaces/${b.workspaceId}/webhook-endpoints/${b.endpointId}`)).id).toBe(b.endpointId);
  });
});

describe('admin token on every admin operation', () => {
  it('answers 401 unauthenticated with no token, a wrong token or an API key', async () => {
    expect(adminOps.length).toBeGreaterThanOrEqual(25);
    const ids = { ...unknownIds, ws: world.a.workspaceId };
    for (const o of adminOps) {
      for (const authorization of [undefined, 'Bearer wrong-token', `Bearer ${sys.adminToken}x`, `Bearer ${world.a.apiKey}`, sys.adminToken]) {
        const r = await call(sys, o.method, pathOf(o, ids), { headers: authorization ? { authorization } : {} });
        expect({ op: label(o), authorization, status: r.status, code: r.body?.error?.code }).toEqual({ op: label(o), authorization, status: 401, code: 'unauthenticated' });
      }
    }
  });
});

describe('secrets', () => {
  it('never appear in any service’s logs nor in plain text in the database, after create, reissue, replay and rotate flows', async () => {
    const { a } = world;
    const secrets = [...world.secrets, 'demo-password', sys.adminToken];
    // Create with an Idempotency-Key, replay it (the stored answer holds the invitation URL), reissue.
    const body = { event_type_id: a.inviteEventTypeId, expires_at: new Date(Date.now() + 3 * 86400000).toISOString(), max_uses: 2, email: 'invitee@example.com' };
    const first = await call(sys, 'POST', '/v1/booking-invitations', { token: a.apiKey, body, headers: { 'idempotency-key': 'sec-invite-1' } });
    const replay = await call(sys, 'POST', '/v1/booking-invitations', { token: a.apiKey, body, headers: { 'idempotency-key': 'sec-invite-1' } });
    expect(first.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.invitation_url).toBe(first.body.data.invitation_url);
    const reissued = await call(sys, 'POST', `/v1/booking-invitations/${first.body.data.id}/reissue`, { token: a.apiKey, headers: { 'idempotency-key': 'sec-reissue-1' } });
    expect(reissued.status).toBe(200);
    secrets.push(first.body.data.invitation_url, reissued.body.data.invitation_url);
    // Rotate a webhook secret and connect a calendar with a password of its own (Radicale refuses it: still never stored in clear).
    const rotated = await admin(sys, 'POST', `/admin/v1/workspaces/${a.workspaceId}/webhook-endpoints/${world.spare.endpointId}/rotate-secret`);
    secrets.push(rotated.secret);
    const calendarPassword = `pw-${Date.now().toString(36)}-Zq9x`;
    await call(sys, 'PUT', `/admin/v1/workspaces/${a.workspaceId}/hosts/${world.spare.hostId}/calendar`, {
      token: sys.adminToken,
      body: { provider: 'caldav', url: `${sys.radicale.url}/`, username: 'demo', password: calendarPassword },
    });
    secrets.push(calendarPassword);

    // The distinctive part of each secret: the random part of keys, the credential of URLs, the body of whsec_.
    const needles = secrets.flatMap((s) => {
      const parts = [s];
      const credential = /\/i\/([^/?#]+)$/.exec(s)?.[1];
      if (credential) parts.push(credential);
      if (s.startsWith('whsec_')) parts.push(s.slice('whsec_'.length));
      if (/^sk_(live|test)_/.test(s)) parts.push(s.slice(8));
      return parts;
    });
    expect(needles.length).toBeGreaterThanOrEqual(20);

    await new Promise((r) => setTimeout(r, 1000));
    const logs = sys.allLogText();
    expect(logs.length).toBeGreaterThan(1000);
    expect(needles.filter((n) => logs.includes(n))).toEqual([]);

    const dump = databaseDump(sys);
    // The dump holds the workspaces' rows (so it is a real dump), but no secret in clear.
    expect(dump).toContain(a.workspaceId);
    expect(dump).toContain(world.b.bookingIds[0]);
    expect(needles.filter((n) => dump.includes(n))).toEqual([]);
  });
});

/** `pg_dump --data-only` of the system's database, or every row of every table as JSON without it. */
function databaseDump(s: System): string {
  const r = spawnSync('pg_dump', ['--data-only', '--no-owner', s.db.adminUrl], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`pg_dump failed: ${r.stderr}`);
  return r.stdout;
}
