import { randomBytes } from 'node:crypto';
import { SCOPES, V1_OPERATIONS } from '@sched/contracts';
import type { AccessTable, OnBehalfOf } from '@sched/http';
import { internalAuthorization } from '@sched/testing';
import { AVAILABILITY_ACCESS } from '../../../services/availability/src/http/access';
import { BOOKING_ACCESS } from '../../../services/booking/src/http/access';
import { CALENDAR_SYNC_ACCESS } from '../../../services/calendar-sync/src/http/access';
import { INVITATION_ACCESS } from '../../../services/invitation/src/http/access';
import { WEBHOOK_DISPATCH_ACCESS } from '../../../services/webhook-dispatch/src/http/access';
import type { ServiceName } from '@sched/db';
import { startSystem, type System } from '../../support/system';

/**
 * Zero trust inside (issue 16): the probe of the issue, against the running system. Every route of
 * every service behind the gateway (each service's access table, which its start-up checks against
 * its routes) is called straight on the service's own port, as any process on the host could:
 * without a credential, with an expired one, one signed by another key, one for another workspace
 * than the path, and one from a caller the route does not allow. Every answer is 401 or 403 with the
 * error envelope; nothing is created.
 */

const TABLES: Record<string, AccessTable> = {
  booking: BOOKING_ACCESS,
  availability: AVAILABILITY_ACCESS,
  invitation: INVITATION_ACCESS,
  'calendar-sync': CALENDAR_SYNC_ACCESS,
  'webhook-dispatch': WEBHOOK_DISPATCH_ACCESS,
};
const SERVICES = ['gateway', 'booking', 'availability', 'invitation', 'calendar-sync', 'webhook-dispatch'];
const WS = 'wsp_AAAAAAAAAAAAAAAAAAAAAA';

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
}, 180_000);
afterAll(async () => {
  await sys?.stop();
});

interface Probe {
  service: string;
  method: string;
  path: string;
  hasWorkspace: boolean;
  callers: readonly string[];
  principal: OnBehalfOf['principal'];
}

const probes: Probe[] = Object.entries(TABLES).flatMap(([service, table]) =>
  Object.entries(table).map(([key, rule]) => {
    const [method, pattern] = key.split(' ') as [string, string];
    const path = pattern.replace(/:ws\b/, WS).replace(/:queue\b/, 'booking').replace(/:([a-zA-Z]+)/g, (_m, name: string) => `${name.slice(0, 3)}_AAAAAAAAAAAAAAAAAAAAAA`);
    return { service, method, path, hasWorkspace: pattern.includes(':ws'), callers: rule.callers, principal: rule.principals[0]! };
  }),
);

async function send(p: Probe, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const url = sys.api(p.service as ServiceName).url;
  const res = await fetch(`${url}${p.path}`, {
    method: p.method,
    headers: { 'content-type': 'application/json', 'x-workspace-id': WS, 'x-api-key-id': 'key_forged', ...headers },
    body: p.method === 'GET' || p.method === 'DELETE' ? undefined : JSON.stringify({ source: 'booking_page', invitation_id: 'biv_AAAAAAAAAAAAAAAAAAAAAA', url: 'https://evil.example.com/hook', events: ['booking.created'] }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const who = (p: Probe, workspaceId: string | undefined = p.hasWorkspace ? WS : undefined): OnBehalfOf => ({
  principal: p.principal,
  workspaceId,
  apiKeyId: 'key_AAAAAAAAAAAAAAAAAAAAAA',
  scopes: SCOPES,
  invitationId: 'biv_AAAAAAAAAAAAAAAAAAAAAA',
  requestId: 'req_probe',
});

it('covers every route of every service behind the gateway', () => {
  expect(probes.length).toBeGreaterThan(50);
  expect(new Set(probes.map((p) => p.service))).toEqual(new Set(Object.keys(TABLES)));
});

it('has every v1 operation of the contracts table as a route of its owner, for the gateway with the operation scope', () => {
  // A service whose access table has a row without a route does not start, so a row is a route.
  for (const op of V1_OPERATIONS) {
    expect([op.operationId, TABLES[op.owner]?.[`${op.method} ${op.path}`]]).toEqual([op.operationId, expect.objectContaining({ callers: expect.arrayContaining(['gateway']), scope: op.scope })]);
  }
});

it('answers 401 with the envelope to every route without a credential, even with forged context headers', async () => {
  const answers = await Promise.all(probes.map(async (p) => [`${p.method} ${p.service}${p.path}`, await send(p, {})] as const));
  const wrong = answers.filter(([, a]) => a.status !== 401 || a.body?.error?.code !== 'unauthenticated').map(([what, a]) => `${what} → ${a.status}`);
  expect(wrong).toEqual([]);
  for (const [, a] of answers) expect(a.body.meta.request_id).toMatch(/^req_/);
});

it('answers 401 to an expired credential and to one signed by a key outside the ring', async () => {
  const otherRing = `test:${randomBytes(32).toString('base64')}`;
  const wrong: string[] = [];
  for (const p of probes) {
    const caller = p.callers[0]!;
    const expired = await send(p, await internalAuthorization(p.service, who(p), { caller, ttlSeconds: -60 }));
    const foreign = await send(p, await internalAuthorization(p.service, who(p), { caller, keys: otherRing }));
    const forAnother = await send(p, await internalAuthorization(SERVICES.find((s) => s !== p.service)!, who(p), { caller }));
    for (const [what, a] of [['expired', expired], ['other key', foreign], ['other audience', forAnother]] as const) {
      if (a.status !== 401 || a.body.error.code !== 'unauthenticated') wrong.push(`${what}: ${p.method} ${p.service}${p.path} → ${a.status}`);
    }
  }
  expect(wrong).toEqual([]);
});

it('answers 403 to a valid credential for another workspace than the path, and to a caller the route does not allow', async () => {
  const wrong: string[] = [];
  for (const p of probes) {
    const caller = p.callers[0]!;
    if (p.hasWorkspace) {
      const elsewhere = await send(p, await internalAuthorization(p.service, who(p, 'wsp_BBBBBBBBBBBBBBBBBBBBBB'), { caller }));
      if (elsewhere.status !== 403 || elsewhere.body.error.code !== 'forbidden') wrong.push(`other workspace: ${p.method} ${p.service}${p.path} → ${elsewhere.status}`);
    }
    // Any other service of the system: calendar-sync creating a webhook endpoint, booking replaying a dead letter, …
    const intruder = SERVICES.find((s) => !p.callers.includes(s) && s !== p.service)!;
    const notAllowed = await send(p, await internalAuthorization(p.service, who(p), { caller: intruder }));
    if (notAllowed.status !== 403 || notAllowed.body.error.code !== 'forbidden') wrong.push(`caller ${intruder}: ${p.method} ${p.service}${p.path} → ${notAllowed.status}`);
  }
  expect(wrong).toEqual([]);
});

it('made nothing: no Booking, no webhook endpoint', async () => {
  const bookings = await sys.db.adminPool.query(`SELECT count(*)::int AS n FROM booking.bookings`);
  const endpoints = await sys.db.adminPool.query(`SELECT count(*)::int AS n FROM webhook_dispatch.endpoints`);
  expect([bookings.rows[0].n, endpoints.rows[0].n]).toEqual([0, 0]);
});
