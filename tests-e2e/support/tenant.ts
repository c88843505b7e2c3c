import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SchedulingClient, verifyWebhook } from '@sched/client';
import { waitFor } from '@sched/testing';
import type { System } from './system';

const ALL_SCOPES = ['event_types:read', 'slots:read', 'bookings:read', 'bookings:write', 'booking_invitations:read', 'booking_invitations:write'];
const KINDS = ['booking.created', 'booking.rescheduled', 'booking.cancelled', 'calendar.created', 'calendar.failed'];

export interface ReceivedWebhook {
  id: string;
  type: string;
  bookingId: string | undefined;
  calendarStatus: string | undefined;
  at: number;
}

/** A customer's receiver: verifies every delivery with the client library and records it (duplicates included). */
export async function startReceiver(): Promise<{ url: string; received: ReceivedWebhook[]; secret: { value: string }; close(): Promise<void> }> {
  const received: ReceivedWebhook[] = [];
  const secret = { value: '' };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      try {
        const event = verifyWebhook(body, req.headers as Record<string, string>, secret.value);
        const booking = (event.data as { booking?: { id: string; calendar: { status: string } } }).booking;
        received.push({ id: event.id, type: event.type, bookingId: booking?.id, calendarStatus: booking?.calendar.status, at: Date.now() });
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, received, secret, close: () => new Promise((r) => server.close(() => r())) };
}

/** An admin API call through the gateway; throws with the answer on anything but 2xx. Resolves with `data`. */
export async function admin(sys: System, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${sys.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${sys.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as any;
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

export interface Tenant {
  workspaceId: string;
  apiKey: string;
  client: SchedulingClient;
  hostId: string;
  eventTypeId: string;
  calendarUser: string;
  calendarName: string;
}

export interface TenantOptions {
  hostTimezone?: string;
  /**
   * Connects the host's calendar in place of the Radicale one (no Radicale calendar is made then, and the
   * tenant's calendarUser / calendarName name none), e.g. connectOAuthCalendar (oauth-connect.ts).
   */
  connectCalendar?: (sys: System, workspaceId: string, hostId: string) => Promise<void>;
}

/**
 * A workspace set up as an operator would through the admin API: key, host (UTC unless `hostTimezone`,
 * available all day, every day, so tests never run out of slots), a Radicale calendar (or what
 * `connectCalendar` connects), a video Event Type and a webhook endpoint pointing at `receiverUrl`.
 * Waits until the Event Type is bookable.
 */
export async function setUpTenant(sys: System, receiver: { url: string; secret: { value: string } }, opts: TenantOptions = {}): Promise<Tenant> {
  const ws = await admin(sys, 'POST', '/admin/v1/workspaces', { name: 'E2E Co' });
  const base = `/admin/v1/workspaces/${ws.id}`;
  const key = await admin(sys, 'POST', `${base}/api-keys`, { name: 'e2e', scopes: ALL_SCOPES, rate_limit: { limit: 100000, window_seconds: 10 } });
  const hostId = await addAllDayHost(sys, ws.id, { name: 'Hana Host', email: 'hana@example.com', timezone: opts.hostTimezone ?? 'UTC', conferencing_url_template: 'https://meet.example.com/{booking_id}' });
  const calendarName = `cal-${ws.id.slice(-6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  if (opts.connectCalendar) await opts.connectCalendar(sys, ws.id, hostId);
  else await connectRadicaleCalendar(sys, ws.id, hostId, calendarName);
  const evt = await admin(sys, 'POST', `${base}/event-types`, { host_id: hostId, name: 'Demo call', slug: 'demo-call', duration_minutes: 30, meeting_type: 'video' });
  const endpoint = await admin(sys, 'POST', `${base}/webhook-endpoints`, { url: receiver.url, events: KINDS });
  receiver.secret.value = endpoint.secret;
  const client = new SchedulingClient({ baseUrl: sys.gatewayUrl, apiKey: key.key });
  await waitFor(async () => (await client.eventTypes.get(evt.id)).bookable, { timeoutMs: 20000, intervalMs: 200 });
  return { workspaceId: ws.id, apiKey: key.key, client, hostId, eventTypeId: evt.id, calendarUser: 'demo', calendarName };
}

/** A host of the workspace, available all day, every day, in its timezone. Resolves with its id. */
export async function addAllDayHost(sys: System, workspaceId: string, host: { name: string; email: string; timezone: string; conferencing_url_template?: string }): Promise<string> {
  const base = `/admin/v1/workspaces/${workspaceId}`;
  const created = await admin(sys, 'POST', `${base}/hosts`, host);
  const day = [{ start: '00:00', end: '24:00' }];
  await admin(sys, 'PUT', `${base}/hosts/${created.id}/schedule`, { weekly: { mon: day, tue: day, wed: day, thu: day, fri: day, sat: day, sun: day }, overrides: [] });
  return created.id as string;
}

/** A new calendar `calendarName` of the system's Radicale (user demo), connected as the host's calendar over CalDAV. */
export async function connectRadicaleCalendar(sys: System, workspaceId: string, hostId: string, calendarName: string): Promise<void> {
  const calendarUrl = await sys.radicale.makeCalendar('demo', calendarName);
  await admin(sys, 'PUT', `/admin/v1/workspaces/${workspaceId}/hosts/${hostId}/calendar`, { provider: 'caldav', url: `${sys.radicale.url}/`, username: 'demo', password: 'demo-password', calendar_url: calendarUrl });
}

/** The first `n` free slot starts from tomorrow on (UTC dates). */
export async function freeStarts(t: Tenant, n: number): Promise<string[]> {
  const day = (offset: number) => new Date(Date.now() + offset * 86400000).toISOString().slice(0, 10);
  const slots = await t.client.eventTypes.slots(t.eventTypeId, { from: day(1), to: day(7), timezone: 'UTC' });
  if (slots.length < n) throw new Error(`only ${slots.length} free slots`);
  return slots.slice(0, n).map((s) => s.start_at);
}
