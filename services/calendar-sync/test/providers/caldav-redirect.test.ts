import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CalDavProvider } from '../../src/providers/caldav/caldav-provider';

interface Seen {
  method?: string;
  url?: string;
  authorization?: string;
}

async function listen(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const multistatus = (href: string, props: string) =>
  `<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">` +
  `<d:response><d:href>${href}</d:href><d:propstat><d:prop>${props}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>`;

/**
 * A small CalDAV server: .well-known, principal, calendar home with one calendar. `sendTo` says where
 * it points the client on another origin: the .well-known redirect, a 307 of the principal lookup,
 * or the calendar-home href.
 */
function fakeCalDav(sendTo: { wellKnown?: string; principal307?: string; home?: string }) {
  return (req: http.IncomingMessage, res: http.ServerResponse, body: string) => {
    const xml = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'application/xml; charset=utf-8' });
      res.end(text);
    };
    if (req.url === '/.well-known/caldav') {
      res.writeHead(301, { location: sendTo.wellKnown ?? '/' });
      return res.end();
    }
    if (body.includes('current-user-principal')) {
      if (sendTo.principal307) {
        res.writeHead(307, { location: sendTo.principal307 });
        return res.end();
      }
      return xml(207, multistatus(req.url!, '<d:current-user-principal><d:href>/principals/u/</d:href></d:current-user-principal>'));
    }
    if (req.url === '/principals/u/') {
      return xml(207, multistatus('/principals/u/', `<c:calendar-home-set><d:href>${sendTo.home ?? '/cal/u/'}</d:href></c:calendar-home-set>`));
    }
    if (req.url === '/cal/u/') {
      return xml(
        207,
        `<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">` +
          `<d:response><d:href>/cal/u/work/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><c:calendar/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>`,
      );
    }
    res.writeHead(404);
    res.end();
  };
}

const provider = new CalDavProvider({ timeoutMs: 3000, mode: 'local' });
afterAll(() => provider.close());

const verify = (url: string) => provider.verify({ provider: 'caldav', url, username: 'alice', password: 'Sup3r-Secret', calendarUrl: null });

describe('CalDAV discovery never sends the credentials to another origin', () => {
  let other: Awaited<ReturnType<typeof listen>>;
  beforeEach(async () => {
    // Another origin (another port) that would love to receive the Basic credentials.
    other = await listen((_req, res) => {
      res.writeHead(207, { 'content-type': 'application/xml' });
      res.end(multistatus('/', '<d:current-user-principal><d:href>/p/</d:href></d:current-user-principal>'));
    });
  });
  afterEach(() => other.close());

  it('follows a same-origin .well-known redirect with the credentials and finds the calendar', async () => {
    const dav = await listen(fakeCalDav({ wellKnown: '/' }));
    try {
      expect(await verify(dav.url)).toEqual({ calendarUrl: `${dav.url}/cal/u/work/` });
      expect(dav.seen.every((s) => s.authorization === `Basic ${Buffer.from('alice:Sup3r-Secret').toString('base64')}`)).toBe(true);
    } finally {
      await dav.close();
    }
  });

  it('a .well-known 301 to another origin is not followed: discovery goes on at the URL given', async () => {
    const dav = await listen(fakeCalDav({ wellKnown: `${other.url}/dav/` }));
    try {
      expect(await verify(dav.url)).toEqual({ calendarUrl: `${dav.url}/cal/u/work/` });
      expect(other.seen).toEqual([]);
    } finally {
      await dav.close();
    }
  });

  it('a 307 of a request to another origin is refused (unavailable), the other server never sees it', async () => {
    const dav = await listen(fakeCalDav({ principal307: `${other.url}/principal` }));
    try {
      await expect(verify(dav.url)).rejects.toMatchObject({ name: 'ProviderError', kind: 'unavailable' });
      expect(other.seen).toEqual([]);
    } finally {
      await dav.close();
    }
  });

  it('a calendar-home href on another origin is not requested (unavailable)', async () => {
    const dav = await listen(fakeCalDav({ home: `${other.url}/cal/u/` }));
    try {
      await expect(verify(dav.url)).rejects.toMatchObject({ name: 'ProviderError', kind: 'unavailable' });
      expect(other.seen).toEqual([]);
    } finally {
      await dav.close();
    }
  });
});

describe('production mode', () => {
  it('refuses a server on loopback at verify and on every later operation, without connecting', async () => {
    const dav = await listen(fakeCalDav({}));
    const port = new URL(dav.url).port;
    // calendar.example.test exists only in this DNS, which answers loopback (a rebinding attacker's answer).
    const prod = new CalDavProvider({ timeoutMs: 3000, mode: 'production', resolveAll: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      for (const url of [dav.url, `http://calendar.example.test:${port}/`, `http://0x7f000001:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`]) {
        await expect(prod.verify({ provider: 'caldav', url, username: 'alice', password: 'pw', calendarUrl: null })).rejects.toMatchObject({ kind: 'unavailable' });
      }
      const access = { provider: 'caldav' as const, url: `http://calendar.example.test:${port}/`, username: 'alice', password: 'pw', calendarUrl: `http://calendar.example.test:${port}/cal/u/work/` };
      await expect(prod.changeMarker(access)).rejects.toMatchObject({ kind: 'unavailable' });
      await expect(prod.listEvents(access, { from: new Date(), to: new Date(Date.now() + 86_400_000) })).rejects.toMatchObject({ kind: 'unavailable' });
      expect(dav.seen).toEqual([]);
    } finally {
      prod.close();
      await dav.close();
    }
  });
});
