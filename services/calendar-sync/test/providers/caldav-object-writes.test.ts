// CalDAV event writes (PUT / DELETE of one object) on the object transport (providers/caldav/object-transport.ts):
// the same requests, answers and refusals as through tsdav and got, against small local servers.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { CalendarAccess, OutgoingEvent } from '../../src/domain/calendar-provider';
import { CalDavProvider } from '../../src/providers/caldav/caldav-provider';

interface Seen {
  method?: string;
  url?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function listen(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void, opts: { keepAlive?: boolean } = {}) {
  const seen: Seen[] = [];
  const sockets: Socket[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (opts.keepAlive === false) res.setHeader('connection', 'close');
      handler(req, res, body);
    });
  });
  server.on('connection', (s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const provider = new CalDavProvider({ timeoutMs: 1500, mode: 'local', now: () => new Date('2026-11-20T08:00:00Z') });
afterAll(() => provider.close());

const event: OutgoingEvent = {
  uid: 'bkg_1@scheduling-service',
  objectName: 'bkg_1.ics',
  start: new Date('2026-11-22T09:30:00Z'),
  end: new Date('2026-11-22T10:00:00Z'),
  sequence: 1,
  summary: 'Phone call with Ada Lovelace',
  description: 'Guest: Ada Lovelace',
  location: null,
  joinUrl: null,
  video: false,
};

const access = (base: string, calendarPath = '/cal/u/work/'): CalendarAccess => ({
  provider: 'caldav',
  url: base,
  username: 'alice',
  password: 'Sup3r-Secret',
  calendarUrl: `${base}${calendarPath}`,
  connection: { id: 'cal_1', workspaceId: 'wsp_1', hostId: 'hst_1' },
});
const basic = `Basic ${Buffer.from('alice:Sup3r-Secret').toString('base64')}`;

describe('CalDAV event writes', () => {
  it('PUTs the object with If-None-Match: *, the credentials and the iCalendar body, and answers its URL and ETag', async () => {
    const dav = await listen((_req, res) => {
      res.writeHead(201, { etag: '"v1"' });
      res.end();
    });
    try {
      expect(await provider.putEvent(access(dav.url), event)).toEqual({ objectUrl: `${dav.url}/cal/u/work/bkg_1.ics`, etag: '"v1"' });
      expect(dav.seen).toHaveLength(1);
      expect(dav.seen[0]).toMatchObject({
        method: 'PUT',
        url: '/cal/u/work/bkg_1.ics',
        headers: { authorization: basic, 'if-none-match': '*', 'content-type': 'text/calendar; charset=utf-8', 'content-length': String(Buffer.byteLength(dav.seen[0]!.body)) },
      });
      expect(dav.seen[0]!.body).toMatch(/^BEGIN:VCALENDAR\r\n[\s\S]*UID:bkg_1@scheduling-service\r\n[\s\S]*END:VCALENDAR(\r\n)?$/);
      expect(dav.seen[0]!.headers['accept-encoding']).toBeUndefined();
    } finally {
      await dav.close();
    }
  });

  it('replaces an object that exists (412) with a plain PUT, and maps 409, 401, 429 and 5xx as before', async () => {
    const answers = [412, 204];
    const dav = await listen((_req, res) => {
      res.writeHead(answers.shift() ?? 500, { etag: '"v2"' });
      res.end();
    });
    try {
      expect(await provider.putEvent(access(dav.url), event)).toEqual({ objectUrl: `${dav.url}/cal/u/work/bkg_1.ics`, etag: '"v2"' });
      expect(dav.seen.map((s) => [s.method, s.headers['if-none-match'], s.headers['if-match']])).toEqual([
        ['PUT', '*', undefined],
        ['PUT', undefined, undefined],
      ]);
      for (const [status, kind] of [
        [409, 'calendar_not_found'],
        [401, 'auth_failed'],
        [429, 'unavailable'],
        [503, 'unavailable'],
        [403, 'calendar_not_found'],
        [400, 'rejected'],
      ] as const) {
        answers.push(status);
        await expect(provider.putEvent(access(dav.url), event)).rejects.toMatchObject({ name: 'ProviderError', kind });
      }
    } finally {
      await dav.close();
    }
  });

  it('DELETEs with the credentials; 404 and 410 count as done, other failures are mapped', async () => {
    const answers = [204, 404, 410, 401, 500];
    const dav = await listen((_req, res) => {
      res.writeHead(answers.shift()!);
      res.end();
    });
    try {
      const url = `${dav.url}/cal/u/work/bkg_1.ics`;
      await provider.deleteEvent(access(dav.url), url);
      await provider.deleteEvent(access(dav.url), url);
      await provider.deleteEvent(access(dav.url), url);
      await expect(provider.deleteEvent(access(dav.url), url)).rejects.toMatchObject({ kind: 'auth_failed' });
      await expect(provider.deleteEvent(access(dav.url), url)).rejects.toMatchObject({ kind: 'unavailable' });
      expect(dav.seen.map((s) => [s.method, s.url, s.headers.authorization])).toEqual(Array(5).fill(['DELETE', '/cal/u/work/bkg_1.ics', basic]));
    } finally {
      await dav.close();
    }
  });

  it('follows a redirect within the origin (through tsdav), and refuses one to another origin without sending anything there', async () => {
    const other = await listen((_req, res) => {
      res.writeHead(201);
      res.end();
    });
    let target = '/moved/bkg_1.ics';
    const dav = await listen((req, res) => {
      if (req.url!.startsWith('/cal/')) {
        res.writeHead(307, { location: target });
        return res.end();
      }
      res.writeHead(201, { etag: '"moved"' });
      res.end();
    });
    try {
      expect(await provider.putEvent(access(dav.url), event)).toMatchObject({ etag: '"moved"' });
      expect(dav.seen.map((s) => [s.method, s.url, s.headers.authorization])).toEqual([
        ['PUT', '/cal/u/work/bkg_1.ics', basic], // object transport: 307
        ['PUT', '/cal/u/work/bkg_1.ics', basic], // again through tsdav and got, which follow it
        ['PUT', '/moved/bkg_1.ics', basic],
      ]);
      target = `${other.url}/steal/bkg_1.ics`;
      await expect(provider.putEvent(access(dav.url), event)).rejects.toMatchObject({ kind: 'unavailable' });
      await expect(provider.deleteEvent(access(dav.url), `${dav.url}/cal/u/work/bkg_1.ics`)).rejects.toMatchObject({ kind: 'unavailable' });
      expect(other.seen).toEqual([]);
    } finally {
      await Promise.all([dav.close(), other.close()]);
    }
  });

  it('never sends the credentials to an object URL on an origin the operator did not give', async () => {
    const other = await listen((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const dav = await listen((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    try {
      await expect(provider.deleteEvent(access(dav.url), `${other.url}/cal/u/work/bkg_1.ics`)).rejects.toMatchObject({ kind: 'unavailable' });
      expect(other.seen).toEqual([]);
    } finally {
      await Promise.all([dav.close(), other.close()]);
    }
  });

  it('retries once, on a new connection, when a kept-alive connection is closed under the request, and ends at the deadline when the server does not answer', async () => {
    const perSocket = new Map<Socket, number>();
    let cutOff = 0;
    const dav = await listen((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      // Once: the server had given up on this kept-alive connection, and closes it instead of answering.
      if (n === 2 && cutOff === 0) {
        cutOff += 1;
        return req.socket.destroy();
      }
      res.writeHead(201);
      res.end();
    });
    let hang = false;
    const slow = await listen(() => {
      hang = true; // never answers
    });
    try {
      // Until a request goes out on a connection used before (undici may open a second one meanwhile).
      for (let i = 0; i < 6 && cutOff === 0; i++) await provider.putEvent(access(dav.url), event);
      expect(cutOff).toBe(1); // that write succeeded all the same: sent again on another connection

      await expect(provider.putEvent(access(slow.url), event)).rejects.toMatchObject({ kind: 'unavailable', message: 'the server did not answer in time' });
      expect(hang).toBe(true);
    } finally {
      await Promise.all([dav.close(), slow.close()]);
    }
  });

  it('in production mode refuses a server on loopback, by literal or by name, without connecting', async () => {
    const dav = await listen((_req, res) => {
      res.writeHead(201);
      res.end();
    });
    const port = new URL(dav.url).port;
    // calendar.example.test exists only in this DNS, which answers loopback (a rebinding attacker's answer).
    const prod = new CalDavProvider({ timeoutMs: 1500, mode: 'production', resolveAll: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      for (const base of [dav.url, `http://calendar.example.test:${port}`, `http://0x7f000001:${port}`]) {
        await expect(prod.putEvent(access(base), event)).rejects.toMatchObject({ kind: 'unavailable', message: 'the server address is not allowed (outbound address policy)' });
        await expect(prod.deleteEvent(access(base), `${base}/cal/u/work/bkg_1.ics`)).rejects.toMatchObject({ kind: 'unavailable' });
      }
      expect(dav.seen).toEqual([]);
    } finally {
      prod.close();
      await dav.close();
    }
  });
});
