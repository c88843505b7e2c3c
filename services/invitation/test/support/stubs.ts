import { claimsOf, makeBooking } from '@sched/testing';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { newId, toLocalTimestamp, toTimestamp, type AdminEventType } from '@sched/contracts';

export interface StubServer {
  url: string;
  close(): Promise<void>;
}

async function serve(handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void): Promise<StubServer> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const errorBody = (code: string, message = code, details: unknown[] = []) => ({ error: { code, message, details }, meta: { request_id: 'req_stub' } });

/** An Event Type as availability's internal API returns it (admin form: v1 fields + access). */
export function eventType(overrides: Partial<AdminEventType> = {}): AdminEventType {
  const now = toTimestamp(new Date('2026-01-01T00:00:00Z'));
  return {
    id: newId('evt'),
    host_id: newId('hst'),
    name: 'Intro call',
    description: 'A first conversation.',
    slug: 'intro',
    duration_minutes: 30,
    slot_interval_minutes: 30,
    buffer_before_minutes: 0,
    buffer_after_minutes: 0,
    minimum_notice_minutes: 0,
    maximum_advance_minutes: 60 * 24 * 90,
    meeting_type: 'video',
    status: 'active',
    bookable: true,
    unavailable_reason: null,
    created_at: now,
    updated_at: now,
    access: 'invitation_only',
    ...overrides,
  };
}

/**
 * availability as a real HTTP server: the internal Event Type routes (by id and by slug) and the v1 Slots
 * route for the workspace of the caller's credential. Slots are the starts given per Event Type, filtered by local date.
 */
export async function startAvailabilityStub() {
  const eventTypes = new Map<string, AdminEventType>(); // `${ws}/${id}`
  const starts = new Map<string, Date[]>(); // evt id → slot starts
  const calls: Array<{ path: string; workspace?: string }> = [];
  let slotsAnswer: { status: number; body: unknown; headers?: Record<string, string> } | null = null;

  const server = await serve(async (req, _body, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    // The workspace the invitation service's credential vouches for (as availability reads it).
    const claims = await claimsOf(req.headers.authorization, 'availability').catch(() => undefined);
    calls.push({ path: url.pathname, workspace: claims?.workspaceId });
    let m = /^\/internal\/v1\/workspaces\/([^/]+)\/event-types\/by-slug\/([^/]+)$/.exec(url.pathname);
    if (m) {
      const found = [...eventTypes.entries()].find(([k, e]) => k.startsWith(`${decodeURIComponent(m![1]!)}/`) && e.slug === decodeURIComponent(m![2]!));
      return found ? json(res, 200, { data: found[1], meta: { request_id: 'r' } }) : json(res, 404, errorBody('not_found'));
    }
    m = /^\/internal\/v1\/workspaces\/([^/]+)\/event-types\/([^/]+)$/.exec(url.pathname);
    if (m) {
      const e = eventTypes.get(`${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`);
      return e ? json(res, 200, { data: e, meta: { request_id: 'r' } }) : json(res, 404, errorBody('not_found'));
    }
    m = /^\/v1\/event-types\/([^/]+)\/slots$/.exec(url.pathname);
    if (m) {
      if (slotsAnswer) return json(res, slotsAnswer.status, slotsAnswer.body, slotsAnswer.headers);
      const ws = claims?.workspaceId;
      const id = decodeURIComponent(m[1]!);
      const e = eventTypes.get(`${ws}/${id}`);
      if (!e) return json(res, 404, errorBody('not_found'));
      const tz = url.searchParams.get('timezone')!;
      const from = url.searchParams.get('from')!;
      const to = url.searchParams.get('to')!;
      const slots = (starts.get(id) ?? [])
        .map((s) => ({ s, local: toLocalTimestamp(s, tz) }))
        .filter(({ local }) => local.slice(0, 10) >= from && local.slice(0, 10) <= to)
        .map(({ s, local }) => {
          const end = new Date(s.getTime() + e.duration_minutes * 60_000);
          return { start_at: toTimestamp(s), end_at: toTimestamp(end), local_start_at: local, local_end_at: toLocalTimestamp(end, tz), timezone: tz };
        });
      return json(res, 200, { data: slots, meta: { request_id: 'r' } });
    }
    json(res, 404, errorBody('not_found'));
  });

  return {
    ...server,
    calls,
    add(workspaceId: string, e: AdminEventType, slotStarts: Date[] = []): AdminEventType {
      eventTypes.set(`${workspaceId}/${e.id}`, e);
      starts.set(e.id, slotStarts);
      return e;
    },
    /** Makes every Slots query answer this (e.g. 503 calendar_unavailable); null restores normal answers. */
    answerSlotsWith(answer: typeof slotsAnswer) {
      slotsAnswer = answer;
    },
  };
}

export interface RecordedBooking {
  workspaceId: string;
  idempotencyKey: string | undefined;
  body: Record<string, any>;
  bookingId: string;
}

/**
 * booking's internal create as a real HTTP server: 201 for each free (event type, start), 409
 * slot_unavailable for a taken one, the stored answer again for a repeated Idempotency-Key. `next`
 * overrides the answers to come (a 503, or a hang to force a timeout).
 */
export async function startBookingStub(opts: { delayMs?: number } = {}) {
  const created: RecordedBooking[] = [];
  const byKey = new Map<string, { status: number; body: unknown }>();
  const taken = new Set<string>();
  const overrides: Array<{ status: number; body: unknown } | 'hang' | 'commit_then_hang'> = [];
  let posts = 0;
  let delayMs = opts.delayMs ?? 0;

  const server = await serve((req, raw, res) => {
    const m = /^\/internal\/v1\/workspaces\/([^/]+)\/bookings$/.exec(req.url ?? '');
    if (!m || req.method !== 'POST') return json(res, 404, errorBody('not_found'));
    posts += 1;
    const ws = decodeURIComponent(m[1]!);
    const key = req.headers['idempotency-key'] as string | undefined;
    const body = JSON.parse(raw) as Record<string, any>;
    const answer = (status: number, b: unknown) => setTimeout(() => json(res, status, b), delayMs);
    const override = overrides.shift();
    if (override === 'hang') return; // never answers: the caller times out
    if (override && override !== 'commit_then_hang') return answer(override.status, override.body);
    if (key && byKey.has(`${ws}/${key}`)) {
      const stored = byKey.get(`${ws}/${key}`)!;
      return answer(stored.status, stored.body);
    }
    const slotKey = `${ws}/${body.event_type_id}/${body.start_at}`;
    if (taken.has(slotKey)) return answer(409, errorBody('slot_unavailable', 'The requested start is not an available slot.'));
    taken.add(slotKey);
    const start = new Date(body.start_at);
    const booking = makeBooking({ source: body.source, event_type_id: body.event_type_id, start_at: toTimestamp(start), guest: body.guest, created_at: toTimestamp(new Date()) });
    created.push({ workspaceId: ws, idempotencyKey: key, body, bookingId: booking.id });
    const stored = { status: 201, body: { data: booking, meta: { request_id: 'req_stub' } } };
    if (key) byKey.set(`${ws}/${key}`, stored);
    if (override === 'commit_then_hang') return; // the Booking exists, but its answer never comes
    answer(stored.status, stored.body);
  });

  return {
    ...server,
    created,
    get posts() {
      return posts;
    },
    setDelay(ms: number) {
      delayMs = ms;
    },
    next(...answers: typeof overrides) {
      overrides.push(...answers);
    },
  };
}
