import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlotCheckCall {
  workspaceId: string;
  body: { event_type_id: string; start_at: string; exclude_booking_id?: string };
}

export interface StubAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Answer only after this long (timeouts). */
  delayMs?: number;
  /** Cut the connection instead of answering (availability unreachable). */
  hangUp?: boolean;
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
 * A real HTTP server in place of the availability service (being built elsewhere): it speaks the slot-check
 * contract of libs/contracts internal.ts and answers whatever the current behaviour says.
 */
export interface AvailabilityStub {
  url: string;
  calls: SlotCheckCall[];
  behave(b: StubBehaviour): void;
  close(): Promise<void>;
}

export async function startAvailabilityStub(initial: StubBehaviour = bookable()): Promise<AvailabilityStub> {
  let behaviour = initial;
  const calls: SlotCheckCall[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const m = /^\/internal\/v1\/workspaces\/([^/]+)\/slot-check$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const call: SlotCheckCall = { workspaceId: decodeURIComponent(m[1]!), body: JSON.parse(raw) };
      calls.push(call);
      const answer = behaviour(call);
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
    behave: (b) => (behaviour = b),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
