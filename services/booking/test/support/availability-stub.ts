import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One check booking asked about (an item of a slot-checks call). */
export interface SlotCheckCall {
  workspaceId: string;
  body: { event_type_id: string; start_at: string; exclude_booking_id?: string };
  /** The request id the item carries (the create's), if any. */
  requestId?: string;
}

/** One HTTP call to the stub: the checks it carried, in order, and its credential. */
export interface SlotChecksRequest {
  workspaceId: string;
  checks: SlotCheckCall[];
  authorization: string | undefined;
}

export interface StubAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Answer only after this long (timeouts). */
  delayMs?: number;
  /** Cut the connection instead of answering (availability unreachable). */
  hangUp?: boolean;
  /** Leave this check's entry out of the call's answer (an answer off-contract: fewer entries than checks). */
  omitEntry?: boolean;
}

export type StubBehaviour = (call: SlotCheckCall) => StubAnswer;

export const HOST_ID = 'hst_AAAAAAAAAAAAAAAAAAAAAA';
export const EVENT_TYPE_ID = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
const MINUTE = 60_000;

/**
 * "Bookable" as availability would answer for a 30-minute Event Type with the given buffers: end = start + 30
 * min, blocked = [start − before, end + after). Each start gets its own range, so distinct starts never clash.
 */
export function bookable(opts: { hostId?: string; meetingType?: string; durationMin?: number; bufferBeforeMin?: number; bufferAfterMin?: number } = {}): StubBehaviour {
  return ({ body }) => {
    const start = new Date(body.start_at).getTime();
    const end = start + (opts.durationMin ?? 30) * MINUTE;
    return {
      status: 200,
      body: {
        data: {
          bookable: true,
          event_type_id: body.event_type_id,
          host_id: opts.hostId ?? HOST_ID,
          start_at: new Date(start).toISOString(),
          end_at: new Date(end).toISOString(),
          blocked_from: new Date(start - (opts.bufferBeforeMin ?? 0) * MINUTE).toISOString(),
          blocked_to: new Date(end + (opts.bufferAfterMin ?? 0) * MINUTE).toISOString(),
          meeting_type: opts.meetingType ?? 'video',
        },
        meta: { request_id: 'req_stub' },
      },
    };
  };
}

export const refusing =
  (reason: 'not_found' | 'event_type_not_bookable' | 'slot_unavailable'): StubBehaviour =>
  () => ({ status: 200, body: { data: { bookable: false, reason }, meta: { request_id: 'req_stub' } } });

/**
 * A real HTTP server in place of the availability service: it speaks the slot-checks contract of
 * libs/contracts internal.ts (booking's only call to availability). The behaviour answers each check as
 * the single slot-check would; a call's answer is made from its checks' answers as availability makes it:
 * - every check 200: 200 with their `data`, in order;
 * - the others all 503 calendar_unavailable: those become item errors (their Retry-After as
 *   retry_after_seconds), the rest answered;
 * - otherwise the call fails as a whole with the first other answer (store down, a plain 503, 404, 500…);
 * - any hang-up cuts the connection; the call answers after the longest delay.
 */
export interface AvailabilityStub {
  url: string;
  /** Every check, in arrival order. */
  calls: SlotCheckCall[];
  /** Every HTTP call. */
  requests: SlotChecksRequest[];
  behave(b: StubBehaviour): void;
  close(): Promise<void>;
}

const isCalendarUnavailable = (a: StubAnswer) => a.status === 503 && (a.body as { error?: { code?: unknown } } | undefined)?.error?.code === 'calendar_unavailable';

/** The answer to one slot-checks call, from its checks' answers (see AvailabilityStub). */
function combine(answers: StubAnswer[]): StubAnswer {
  const delayMs = Math.max(0, ...answers.map((a) => a.delayMs ?? 0));
  if (answers.some((a) => a.hangUp)) return { status: 0, hangUp: true };
  const whole = answers.find((a) => a.status !== 200 && !isCalendarUnavailable(a));
  if (whole) return { ...whole, delayMs };
  const data = answers.filter((a) => !a.omitEntry).map((a) =>
    a.status === 200
      ? (a.body as { data?: unknown } | undefined)?.data
      : { error: { code: 'calendar_unavailable', message: 'The calendar provider is unavailable.', retry_after_seconds: Number(a.headers?.['retry-after'] ?? 1) } },
  );
  return { status: 200, body: { data, meta: { request_id: 'req_stub' } }, delayMs };
}

export async function startAvailabilityStub(initial: StubBehaviour = bookable()): Promise<AvailabilityStub> {
  let behaviour = initial;
  const calls: SlotCheckCall[] = [];
  const requests: SlotChecksRequest[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const m = /^\/internal\/v1\/workspaces\/([^/]+)\/slot-checks$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const workspaceId = decodeURIComponent(m[1]!);
      const items = (JSON.parse(raw) as { checks: Array<SlotCheckCall['body'] & { request_id?: string }> }).checks;
      const checks = items.map(({ request_id: requestId, ...body }): SlotCheckCall => ({ workspaceId, body, ...(requestId !== undefined && { requestId }) }));
      calls.push(...checks);
      const authorization = req.headers.authorization;
      requests.push({ workspaceId, checks, authorization });
      const answer = combine(checks.map((c) => behaviour(c)));
      if (answer.hangUp) {
        req.socket.destroy();
        return;
      }
      setTimeout(() => {
        if (res.destroyed) return;
        res.statusCode = answer.status;
        res.setHeader('content-type', 'application/json');
        for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
        res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      }, answer.delayMs ?? 0);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    requests,
    behave: (b) => (behaviour = b),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
