import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CalDavProvider } from '../../src/providers/caldav/caldav-provider';

/** A CalDAV collection answering PROPFIND depth 0 with the properties it has; records what was asked for. */
async function startCollection(props: { ctag?: string; syncToken?: string }): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      const found: string[] = ['<d:resourcetype><d:collection/><c:calendar/></d:resourcetype>'];
      if (props.ctag && body.includes('getctag')) found.push(`<cs:getctag>${props.ctag}</cs:getctag>`);
      if (props.syncToken && body.includes('sync-token')) found.push(`<d:sync-token>${props.syncToken}</d:sync-token>`);
      res.writeHead(207, { 'content-type': 'application/xml; charset=utf-8' });
      res.end(
        `<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/">` +
          `<d:response><d:href>${req.url}</d:href><d:propstat><d:prop>${found.join('')}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>`,
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/u/cal/`, bodies, close: () => new Promise((r) => server.close(() => r())) };
}

const access = (calendarUrl: string) => ({ provider: 'caldav' as const, url: calendarUrl, username: 'u', password: 'p', calendarUrl });

describe('CalDavProvider.changeMarker', () => {
  it('asks for the ctag only when the server has one (one PROPFIND, no sync-token to compute)', async () => {
    const col = await startCollection({ ctag: 'c1', syncToken: 'http://x/sync/1' });
    try {
      expect(await new CalDavProvider({ timeoutMs: 2000, mode: 'local' }).changeMarker(access(col.url))).toBe('ctag:c1');
      expect(col.bodies).toHaveLength(1);
      expect(col.bodies[0]).not.toContain('sync-token');
    } finally {
      await col.close();
    }
  });

  it('falls back to the sync-token when there is no ctag, and to null when there is neither', async () => {
    const col = await startCollection({ syncToken: 'http://x/sync/7' });
    const none = await startCollection({});
    try {
      expect(await new CalDavProvider({ timeoutMs: 2000, mode: 'local' }).changeMarker(access(col.url))).toBe('sync:http://x/sync/7');
      expect(col.bodies).toHaveLength(2);
      expect(await new CalDavProvider({ timeoutMs: 2000, mode: 'local' }).changeMarker(access(none.url))).toBeNull();
    } finally {
      await Promise.all([col.close(), none.close()]);
    }
  });
});
