import http from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo, Socket } from 'node:net';
import { systemResolveAll } from '@sched/address-policy';
import { newId } from '@sched/contracts';
import { createTestDatabase, testAmqp, type TestDatabase } from '@sched/testing';
import { call, cleanupBroker, startAvailabilityStub, startCalendarSync, type RunningCalendarSync } from './support/harness';

/**
 * The outbound address policy at connect time (docs/security.md, "Outbound address policy"): in
 * production mode no calendar URL may lead calendar-sync to a loopback, private, link-local or
 * otherwise non-public address, and every server that cannot be reached (refused by the policy,
 * refused by the host, silent, unknown to DNS) gets the same answer, so the 422 is no port scanner.
 */

/** Names the tests control; anything else goes to the system resolver. */
const FAKE_DNS: Record<string, LookupAddress[] | 'hang'> = {
  'loopback.example.test': [{ address: '127.0.0.1', family: 4 }],
  'private.example.test': [{ address: '10.0.0.7', family: 4 }],
  'metadata.example.test': [{ address: '169.254.169.254', family: 4 }],
  'mixed.example.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.8', family: 4 },
  ],
  'nat64.example.test': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
  'slow-dns.example.test': 'hang',
};
const resolveAll = async (host: string): Promise<LookupAddress[]> => {
  const fake = FAKE_DNS[host];
  if (fake === 'hang') return new Promise(() => undefined);
  return fake ?? systemResolveAll(host);
};

/** The one answer for every calendar server that cannot be reached. */
const UNREACHABLE = { code: 'invalid_reference', message: 'The calendar server could not be reached.', details: [{ field: 'url', issue: 'unreachable' }] };

let db: TestDatabase;
let availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
let prod: RunningCalendarSync;
let local: RunningCalendarSync;
/** A server on loopback standing in for anything internal: it must never see a connection from production mode. */
let canary: http.Server;
const canaryConnections: Socket[] = [];
/** Accepts connections and never answers (a filtered port, a tarpit). */
let silent: http.Server;
const amqp = testAmqp();
const ws = newId('wsp');
const path = (host: string) => `/admin/v1/workspaces/${ws}/hosts/${host}/calendar`;

const listenLoopback = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

let canaryPort: number;
let silentPort: number;

beforeAll(async () => {
  [db, availability] = await Promise.all([createTestDatabase({ services: ['calendar-sync'] }), startAvailabilityStub()]);
  canary = http.createServer((_req, res) => res.end('internal'));
  canary.on('connection', (s) => canaryConnections.push(s));
  silent = http.createServer(() => undefined);
  [canaryPort, silentPort] = await Promise.all([listenLoopback(canary), listenLoopback(silent)]);
  prod = await startCalendarSync({ db, amqp, availabilityUrl: availability.url, env: { CALENDAR_MODE: 'production', PROVIDER_TIMEOUT_MS: '800' }, setup: { resolveAll } });
  local = await startCalendarSync({ db, amqp, availabilityUrl: availability.url, env: { PROVIDER_TIMEOUT_MS: '800' }, setup: { resolveAll } });
});

afterAll(async () => {
  await prod?.stop();
  await local?.stop();
  for (const s of [canary, silent]) {
    s?.closeAllConnections();
    await new Promise((r) => (s ? s.close(() => r(undefined)) : r(undefined)));
  }
  await availability?.close();
  await cleanupBroker(amqp, [200, 400]);
  await db?.drop();
});

async function connect(svc: RunningCalendarSync, url: string, calendarUrl?: string) {
  const host = availability.addHost(ws);
  const res = await call(svc.url, 'PUT', path(host.id), { provider: 'caldav', url, username: 'alice', password: 'Pa55word-for-the-test', ...(calendarUrl ? { calendar_url: calendarUrl } : {}) });
  const stored = await db.adminPool.query('SELECT count(*)::int AS n FROM calendar_sync.calendar_connections WHERE host_id = $1', [host.id]);
  return { res, stored: stored.rows[0].n as number };
}

describe('production mode (CALENDAR_MODE=production) at registration', () => {
  const hostile = () => [
    `http://127.0.0.1:${canaryPort}/`,
    `http://127.1:${canaryPort}/`,
    `http://0.0.0.0:${canaryPort}/`,
    `http://0x7f000001:${canaryPort}/`,
    `http://2130706433:${canaryPort}/`,
    `http://0177.0.0.1:${canaryPort}/`,
    `http://[::1]:${canaryPort}/`,
    `http://[::ffff:127.0.0.1]:${canaryPort}/`,
    `http://localhost:${canaryPort}/`,
    `http://dav.localhost:${canaryPort}/`,
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:0:a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[64:ff9b:1::a9fe:a9fe]/',
    'http://10.1.2.3/',
    'http://192.168.0.1/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    // Names resolving to such addresses: refused when connecting, on the addresses the socket would use.
    `http://loopback.example.test:${canaryPort}/`,
    'http://private.example.test/',
    'http://metadata.example.test/',
    'http://mixed.example.test/',
    'http://nat64.example.test/',
  ];

  it('answers every internal target with the one unreachable 422, stores nothing and contacts nothing', async () => {
    for (const url of hostile()) {
      const { res, stored } = await connect(prod, url);
      expect({ url, status: res.status, error: res.body.error }).toEqual({ url, status: 422, error: UNREACHABLE });
      expect(stored).toBe(0);
    }
    // calendar_url is held to the same rule, with the same answer.
    const { res } = await connect(prod, 'http://loopback.example.test/', 'http://169.254.169.254/cal/');
    expect(res.body.error).toEqual(UNREACHABLE);
    expect(canaryConnections).toHaveLength(0);
  });

  it('answers a name that does not resolve, and DNS that never answers, the same way', async () => {
    for (const url of ['http://no-such-host.invalid/', 'http://slow-dns.example.test/']) {
      const { res } = await connect(prod, url);
      expect({ url, status: res.status, error: res.body.error }).toEqual({ url, status: 422, error: UNREACHABLE });
    }
  });
});

describe('local mode (development, tests)', () => {
  it('is the default outside NODE_ENV=production', () => {
    expect(local.config.CALENDAR_MODE).toBe('local');
    expect(prod.config.CALENDAR_MODE).toBe('production');
  });

  it('still reaches a server on loopback (a local Radicale) but not other internal addresses', async () => {
    const { res } = await connect(local, `http://127.0.0.1:${canaryPort}/`);
    // The canary is no CalDAV server: the point is that it was reached.
    expect(res.body.error.details).toEqual([{ field: 'url', issue: 'not_caldav' }]);
    expect(canaryConnections.length).toBeGreaterThan(0);
    for (const url of ['http://169.254.169.254/', 'http://10.1.2.3/', 'http://private.example.test/']) {
      expect((await connect(local, url)).res.body.error).toEqual(UNREACHABLE);
    }
  });

  it('gives a refused port, a silent port and a policy refusal the same answer', async () => {
    const answers = await Promise.all([`http://127.0.0.1:1/`, `http://127.0.0.1:${silentPort}/`, 'http://0.0.0.0:1/'].map((url) => connect(local, url)));
    for (const { res } of answers) expect(res.body.error).toEqual(UNREACHABLE);
  });
});
