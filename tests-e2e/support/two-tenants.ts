import { waitFor } from '@sched/testing';
import type { System } from './system';
import { freeStarts, setUpTenant, startReceiver, type Tenant } from './tenant';

/**
 * Two workspaces with real data in both (bookings, an invitation, webhook endpoints and
 * deliveries), for the fuzz and security suites: everything of B is an id that must never
 * show up in an answer to A. A also gets expendable resources (a spare key, host, Event Type
 * and webhook endpoint) that destructive requests may hit without breaking the suite.
 */

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export async function call(sys: System, method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${sys.gatewayUrl}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** An admin call that must succeed; returns `data`. */
export async function admin(sys: System, method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(sys, method, path, { token: sys.adminToken, body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${r.text}`);
  return r.body?.data;
}

export const ALL_SCOPES = ['event_types:read', 'slots:read', 'bookings:read', 'bookings:write', 'booking_invitations:read', 'booking_invitations:write'] as const;

export interface TenantData extends Tenant {
  keyId: string;
  endpointId: string;
  endpointSecret: string;
  inviteEventTypeId: string;
  bookingIds: string[];
  invitationId: string;
  invitationUrl: string;
  deliveryIds: string[];
  webhookEventIds: string[];
  /** Every id of this workspace, for "never in another workspace's answers". */
  allIds: string[];
}

export interface Spare {
  keyId: string;
  hostId: string;
  eventTypeId: string;
  endpointId: string;
}

export interface World {
  a: TenantData;
  b: TenantData;
  /** A's resources that fuzzed destructive admin requests may revoke, delete or rewrite. */
  spare: Spare;
  /** Every secret handed out while setting up (keys, credentials, webhook secrets). */
  secrets: string[];
  close(): Promise<void>;
}

async function fillTenant(sys: System, t: Tenant, receiverSecret: string, tag: string): Promise<TenantData> {
  const base = `/admin/v1/workspaces/${t.workspaceId}`;
  const keys = (await admin(sys, 'GET', `${base}/api-keys`)) as { id: string }[];
  const endpoints = (await admin(sys, 'GET', `${base}/webhook-endpoints`)) as { id: string }[];
  const inviteEvt = await admin(sys, 'POST', `${base}/event-types`, {
    host_id: t.hostId,
    name: `Invite only ${tag}`,
    slug: 'invite-only',
    duration_minutes: 30,
    meeting_type: 'video',
    access: 'invitation_only',
  });
  const starts = await freeStarts(t, 6);
  const bookingIds: string[] = [];
  for (const [i, start] of [starts[tag === 'a' ? 0 : 2]!, starts[tag === 'a' ? 4 : 5]!].entries()) {
    const r = await call(sys, 'POST', '/v1/bookings', {
      token: t.apiKey,
      body: { event_type_id: t.eventTypeId, start_at: start, guest: { name: `Guest ${tag}${i}`, email: `guest-${tag}${i}@example.com`, timezone: 'UTC' } },
    });
    if (r.status !== 201) throw new Error(`booking → ${r.status} ${r.text}`);
    bookingIds.push(r.body.data.id);
  }
  const cancelled = await call(sys, 'POST', `/v1/bookings/${bookingIds[1]}/cancel`, { token: t.apiKey, body: {} });
  if (cancelled.status !== 200) throw new Error(`cancel → ${cancelled.status} ${cancelled.text}`);
  const inv = await call(sys, 'POST', '/v1/booking-invitations', {
    token: t.apiKey,
    body: { event_type_id: inviteEvt.id, expires_at: new Date(Date.now() + 7 * 86400000).toISOString(), max_uses: 3 },
  });
  if (inv.status !== 201) throw new Error(`invitation → ${inv.status} ${inv.text}`);
  const deliveries = await waitFor(
    async () => {
      const list = (await admin(sys, 'GET', `${base}/webhook-deliveries`)) as { id: string; event_id: string }[];
      return list.length >= 3 ? list : null;
    },
    { timeoutMs: 30000, intervalMs: 300 },
  );
  const data: Omit<TenantData, 'allIds'> = {
    ...t,
    keyId: keys[0]!.id,
    endpointId: endpoints[0]!.id,
    endpointSecret: receiverSecret,
    inviteEventTypeId: inviteEvt.id,
    bookingIds,
    invitationId: inv.body.data.id,
    invitationUrl: inv.body.data.invitation_url,
    deliveryIds: deliveries.map((d) => d.id),
    webhookEventIds: deliveries.map((d) => d.event_id),
  };
  const allIds = [data.workspaceId, data.keyId, data.endpointId, data.hostId, data.eventTypeId, data.inviteEventTypeId, data.invitationId, ...bookingIds, ...data.deliveryIds, ...data.webhookEventIds];
  return { ...data, allIds: [...new Set(allIds)] };
}

export async function setUpTwoTenants(sys: System): Promise<World> {
  const receiverA = await startReceiver();
  const receiverB = await startReceiver();
  const closeReceivers = async () => {
    await receiverA.close();
    await receiverB.close();
  };
  let a: TenantData;
  let b: TenantData;
  try {
    a = await fillTenant(sys, await setUpTenant(sys, receiverA), receiverA.secret.value, 'a');
    b = await fillTenant(sys, await setUpTenant(sys, receiverB), receiverB.secret.value, 'b');
  } catch (err) {
    await closeReceivers();
    throw err;
  }
  const base = `/admin/v1/workspaces/${a.workspaceId}`;
  const spareKey = await admin(sys, 'POST', `${base}/api-keys`, { name: 'spare', scopes: ['bookings:read'] });
  const spareHost = await admin(sys, 'POST', `${base}/hosts`, { name: 'Spare Host', email: 'spare@example.com', timezone: 'UTC' });
  const spareEvt = await admin(sys, 'POST', `${base}/event-types`, { host_id: spareHost.id, name: 'Spare', slug: 'spare', duration_minutes: 15, meeting_type: 'phone' });
  const spareEndpoint = await admin(sys, 'POST', `${base}/webhook-endpoints`, { url: 'https://example.invalid/hooks', events: ['booking.created'] });
  return {
    a,
    b,
    spare: { keyId: spareKey.id, hostId: spareHost.id, eventTypeId: spareEvt.id, endpointId: spareEndpoint.id },
    secrets: [a.apiKey, b.apiKey, spareKey.key, a.endpointSecret, b.endpointSecret, spareEndpoint.secret, a.invitationUrl, b.invitationUrl],
    close: closeReceivers,
  };
}
