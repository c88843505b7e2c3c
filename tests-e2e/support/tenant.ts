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

export interface Receiver {
  url: string;
  /** Every delivery (duplicates included), in order of arrival. */
  received: ReceivedWebhook[];
  /** The endpoint's signing secret (setUpTenant fills it in). */
  secret: { value: string };
  /**
   * verify 'after': verifies every delivery recorded and not verified yet with the client library and
   * resolves with how many it verified; throws on the first that fails (bad signature, stale timestamp,
   * not a v1 webhook body). verify 'each': nothing is ever pending, resolves 0.
   */
  verifyPending(): number;
  /**
   * verify 'after': the start of a measured phase. From now until the next verifyPending deliveries are
   * recorded and wait, as they do from the start until the first verifyPending (a warm-up's verifyPending
   * ends that first phase; without this call the next phase would verify on arrival). verify 'each': no effect.
   */
  deferVerification(): void;
  /** Stops listening; with verify 'after', first verifies what is pending (throws as verifyPending). */
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /**
   * 'each' (default): every delivery is verified when it arrives (the client library's verifyWebhook:
   * Standard Webhooks signature and timestamp, contract v1 body); a bad one is answered 400 and not recorded.
   * 'after' (benchmarks): every delivery is answered 204 at once and recorded from its raw body (type and
   * Booking read with JSON.parse, not verified yet); verifyPending() verifies them all later, outside the
   * measured phase, and the caller fails on what it throws. A measured phase runs from the start, or from a
   * deferVerification(), to the next verifyPending(); outside one each delivery is verified as it arrives
   * (a stop may take minutes). The signature has to be checked within Standard Webhooks' 5-minute timestamp
   * tolerance, and a measured phase can last longer (the sustained bench waits up to
   * BENCH_SETTLE_TIMEOUT_S, 300 s, for its backlog), so a delivery still pending 4 minutes after it arrived
   * is verified then, by a check every 30 s (a failure there is thrown by the next verifyPending / close).
   */
  verify?: 'each' | 'after';
}

/** A delivery recorded by a receiver in verify 'after' mode: raw body and the three Standard Webhooks headers. */
interface RawDelivery {
  body: Buffer;
  headers: Record<string, string>;
  record: ReceivedWebhook;
}

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
/** A delivery still unverified this long after it arrived is verified then (Standard Webhooks rejects timestamps older than 5 minutes). */
const VERIFY_WITHIN_MS = 4 * 60_000;

/**
 * A customer's receiver: records every delivery (duplicates included) and verifies each with the client
 * library, on arrival (verify 'each', the default) or after the measured phase (verify 'after').
 */
export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const secret = { value: '' };
  const pending: RawDelivery[] = [];
  let failure: Error | undefined;

  /** Verifies one recorded delivery; the record must be what the verified body says. */
  const verifyOne = (d: RawDelivery): void => {
    const event = verifyWebhook(d.body, d.headers, secret.value);
    const booking = (event.data as { booking?: { id: string; calendar: { status: string } } }).booking;
    const r = d.record;
    if (r.id !== event.id || r.type !== event.type || r.bookingId !== booking?.id || r.calendarStatus !== booking?.calendar.status) {
      throw new Error(`delivery ${event.id}: recorded as ${JSON.stringify(r)}, the verified body says ${event.type} of ${booking?.id}`);
    }
  };
  const verifyUntil = (arrivedBefore: number): number => {
    let n = 0;
    while (pending.length > 0 && pending[0]!.record.at <= arrivedBefore) {
      const d = pending.shift()!;
      try {
        verifyOne(d);
      } catch (err) {
        failure ??= new Error(`a webhook delivery failed verification: ${err instanceof Error ? err.message : String(err)}`);
      }
      n++;
    }
    return n;
  };
  /** In a measured phase (from the start or deferVerification to verifyPending) deliveries wait; outside one each is verified on arrival. */
  let measuring = true;
  const verifyPending = (): number => {
    measuring = false;
    const n = verifyUntil(Infinity);
    if (failure) throw failure;
    return n;
  };

  const server =
    opts.verify === 'after'
      ? http.createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            res.writeHead(204).end();
            const body = Buffer.concat(chunks);
            const headers: Record<string, string> = {};
            for (const name of SIGNATURE_HEADERS) {
              const v = req.headers[name];
              if (typeof v === 'string') headers[name] = v;
            }
            let parsed: { id?: string; type?: string; data?: { booking?: { id?: string; calendar?: { status?: string } } } } = {};
            try {
              parsed = JSON.parse(body.toString()) as typeof parsed;
            } catch {
              // Not JSON: recorded as is, verifyPending fails on it.
            }
            const booking = parsed.data?.booking;
            const record: ReceivedWebhook = { id: String(parsed.id ?? headers['webhook-id']), type: String(parsed.type), bookingId: booking?.id, calendarStatus: booking?.calendar?.status, at: Date.now() };
            received.push(record);
            pending.push({ body, headers, record });
            // After the measured phase the cost no longer matters, and a delivery arriving during a long stop
            // must not wait past Standard Webhooks' 5-minute timestamp tolerance.
            if (!measuring) verifyUntil(Infinity);
          });
        })
      : http.createServer((req, res) => {
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
  // Not redundant with the verification on arrival: that one starts only when a measured phase ends, and a
  // phase can outlast the tolerance.
  const timer = opts.verify === 'after' ? setInterval(() => verifyUntil(Date.now() - VERIFY_WITHIN_MS), 30_000) : undefined;
  timer?.unref();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    secret,
    verifyPending,
    deferVerification: () => {
      if (opts.verify === 'after') measuring = true;
    },
    close: async () => {
      clearInterval(timer);
      // Keep-alive connections of a sender still running would hold close() open: end them.
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      verifyPending();
    },
  };
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
