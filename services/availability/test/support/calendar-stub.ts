import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type StubBehaviour =
  | { kind: 'busy'; intervals: Array<{ start_at: string; end_at: string }> }
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'slow'; ms: number }
  | { kind: 'garbage' };

export interface CalendarStub {
  url: string;
  /** Busy queries received, newest last. */
  requests: Array<{ workspaceId: string; hostId: string; from: string | null; to: string | null }>;
  /** How to answer for one host (default: connected, nothing busy). */
  behave(hostId: string, behaviour: StubBehaviour): void;
  /** Stops listening (callers then get connection refused) until resume(). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

const BUSY_PATH = /^\/internal\/v1\/workspaces\/([^/]+)\/hosts\/([^/]+)\/busy$/;

/** calendar-sync's internal busy API as a real HTTP server, answering per the contract (internal.ts). */
export async function startCalendarStub(): Promise<CalendarStub> {
  const behaviours = new Map<string, StubBehaviour>();
  const requests: CalendarStub['requests'] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    const m = BUSY_PATH.exec(url.pathname);
    res.setHeader('content-type', 'application/json');
    if (req.method !== 'GET' || !m) {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'no route', details: [] }, meta: { request_id: 'req_stub' } }));
      return;
    }
    const hostId = decodeURIComponent(m[2]!);
    requests.push({ workspaceId: decodeURIComponent(m[1]!), hostId, from: url.searchParams.get('from'), to: url.searchParams.get('to') });
    const b = behaviours.get(hostId) ?? { kind: 'busy', intervals: [] };
    const answer = () => {
      if (b.kind === 'status') {
        res.statusCode = b.status;
        if (b.retryAfter) res.setHeader('retry-after', b.retryAfter);
        const code = b.status === 404 ? 'not_found' : b.status === 503 ? 'calendar_unavailable' : 'internal_error';
        res.end(JSON.stringify({ error: { code, message: 'stub', details: [] }, meta: { request_id: 'req_stub' } }));
      } else if (b.kind === 'garbage') {
        res.end(JSON.stringify({ data: { host_id: hostId, intervals: 'nope' }, meta: { request_id: 'req_stub' } }));
      } else {
        const intervals = b.kind === 'busy' ? b.intervals : [];
        res.end(JSON.stringify({ data: { host_id: hostId, snapshot_at: new Date().toISOString(), intervals }, meta: { request_id: 'req_stub' } }));
      }
    };
    if (b.kind === 'slow') setTimeout(answer, b.ms);
    else answer();
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  await listen(0);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    behave: (hostId, behaviour) => void behaviours.set(hostId, behaviour),
    pause: stop,
    resume: () => listen(port),
    close: async () => {
      if (server.listening) await stop();
    },
  };
}
