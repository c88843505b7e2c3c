import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressNotAllowedError, createGuardedGot, UrlNotAllowedError, type GuardedGot } from '../src';

const RULES = { productionSchemes: ['https:'] as const };

/**
 * A local server that counts connections; `/to-literal` redirects to itself by IP literal, `/to-private`
 * to a private address and `/to-private-name` to a name the fake DNS resolves to one (both refused
 * before any connection).
 */
async function startServer() {
  let connections = 0;
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/to-private' || req.url === '/to-private-name') {
      res.writeHead(307, { location: req.url === '/to-private' ? 'http://10.0.0.7/x' : 'http://private.example.test/x' });
      return void res.end();
    }
    if (req.url === '/to-literal') {
      res.writeHead(302, { location: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x` });
      return void res.end();
    }
    res.end('ok');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function failure(client: GuardedGot, p: Promise<unknown>): Promise<unknown> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeDefined();
  return client.policyError(err);
}

describe('createGuardedGot', () => {
  let srv: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => (srv = await startServer()));
  afterAll(() => srv.close());

  it('in local mode reaches loopback through the guarded lookup, with got’s defaults turned off', async () => {
    const local = createGuardedGot({ mode: 'local', rules: RULES, resolveAll: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      // The name exists only in the fake DNS: the request arrives only if the socket used its answer.
      const res = await local.got(`http://only-in-fake-dns.test:${srv.port}/hello`);
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('ok');
      const headers = srv.seen.at(-1)!;
      expect(headers.host).toBe(`only-in-fake-dns.test:${srv.port}`);
      expect(headers['user-agent']).toBeUndefined();
      expect(headers['accept-encoding']).toBeUndefined();
      // Statuses are returned, redirects not followed.
      const redirect = await local.got(`http://127.0.0.1:${srv.port}/to-literal`);
      expect(redirect.statusCode).toBe(302);
    } finally {
      local.close();
    }
  });

  it('in production mode refuses literals, localhost names and names resolving to private addresses before connecting', async () => {
    const prod = createGuardedGot({ mode: 'production', rules: { productionSchemes: ['https:', 'http:'] }, resolveAll: async () => [{ address: '10.0.0.7', family: 4 }] });
    const before = srv.connections();
    try {
      for (const host of ['127.0.0.1', '0x7f000001', '[::1]', 'localhost', 'private.example.test']) {
        const err = await failure(prod, prod.got(`http://${host}:${srv.port}/`));
        expect(err).toBeInstanceOf(AddressNotAllowedError);
      }
      expect(srv.connections()).toBe(before);
    } finally {
      prod.close();
    }
  });

  it('checks each redirect hop it is asked to follow again, before connecting', async () => {
    const fakeDns = async (host: string) => [{ address: host === 'private.example.test' ? '10.0.0.7' : '127.0.0.1', family: 4 }];
    const local = createGuardedGot({ mode: 'local', rules: RULES, resolveAll: fakeDns });
    try {
      expect((await local.got(`http://127.0.0.1:${srv.port}/to-literal`, { followRedirect: true })).body).toBe('ok');
      // Local mode allows loopback only: the hop to a private literal (checkTargetUrl) and to a name
      // resolving to one (the guarded lookup) are refused.
      expect(await failure(local, local.got(`http://127.0.0.1:${srv.port}/to-private`, { followRedirect: true }))).toBeInstanceOf(AddressNotAllowedError);
      expect(await failure(local, local.got(`http://127.0.0.1:${srv.port}/to-private-name`, { followRedirect: true }))).toBeInstanceOf(AddressNotAllowedError);
    } finally {
      local.close();
    }
  });

  it('refuses a scheme the rules do not allow in production mode, and credentials in the URL', async () => {
    const prod = createGuardedGot({ mode: 'production', rules: RULES });
    try {
      const scheme = await failure(prod, prod.got('http://hooks.example.com/in'));
      expect(scheme).toBeInstanceOf(UrlNotAllowedError);
      expect((scheme as UrlNotAllowedError).problem).toBe('scheme_not_allowed');
      const credentials = await failure(prod, prod.got('https://u:p@hooks.example.com/in'));
      expect((credentials as UrlNotAllowedError).problem).toBe('credentials_not_allowed');
    } finally {
      prod.close();
    }
  });

  it('leaves other errors as got reported them', async () => {
    const local = createGuardedGot({ mode: 'local', rules: RULES });
    try {
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const err = await failure(local, local.got(`http://127.0.0.1:${port}/`));
      expect(err).toMatchObject({ name: 'RequestError', code: 'ECONNREFUSED' });
      expect(local.policyError('not an error')).toBe('not an error');
    } finally {
      local.close();
    }
  });
});
