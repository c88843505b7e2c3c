import type { LookupAddress } from 'node:dns';
import { systemResolveAll } from '@sched/address-policy';
import { newId } from '@sched/contracts';
import { createSecretBox } from '@sched/secrets';
import { createTestDatabase, testAmqp, waitFor, type TestAmqp, type TestDatabase } from '@sched/testing';
import { createWebhookSender } from '../src/delivery/webhook.sender';
import { generateWebhookSecret } from '../src/domain/webhook-signing';
import {
  call,
  cleanupBroker,
  deliveriesOf,
  SECRETS_KEY,
  startDispatch,
  startPublisher,
  startReceiver,
  type DispatchUnderTest,
  type Publisher,
  type Receiver,
} from './support/dispatch-harness';

/** Names the tests control; anything else goes to the system resolver (localhost included). */
const FAKE_DNS: Record<string, LookupAddress[]> = {
  'private.example.test': [{ address: '10.0.0.7', family: 4 }],
  'metadata.example.test': [{ address: '169.254.169.254', family: 4 }],
  'mixed.example.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.8', family: 4 },
  ],
  'rebind.example.test': [{ address: '127.0.0.1', family: 4 }],
  // AAAA records embedding the metadata address: IPv4-translated, 6to4 and local-use NAT64.
  'translated.example.test': [{ address: '::ffff:0:a9fe:a9fe', family: 6 }],
  'sixtofour.example.test': [{ address: '2002:a9fe:a9fe::1', family: 6 }],
  'nat64.example.test': [{ address: '64:ff9b:1::a9fe:a9fe', family: 6 }],
};
const resolveAll = async (host: string): Promise<LookupAddress[]> => FAKE_DNS[host] ?? systemResolveAll(host);

let db: TestDatabase;
let amqp: TestAmqp;
let prod: DispatchUnderTest;
let pub: Publisher;
let rec: Receiver;

beforeAll(async () => {
  db = await createTestDatabase({ services: ['webhook-dispatch'] });
  amqp = testAmqp();
  prod = await startDispatch(db, amqp, { WEBHOOK_MODE: 'production', WEBHOOK_RETRY_SCHEDULE_MS: '50' }, { resolveAll });
  pub = await startPublisher(amqp);
  rec = await startReceiver();
});

afterAll(async () => {
  await prod?.stop();
  await pub?.close();
  await rec?.close();
  await cleanupBroker(amqp);
  await db?.drop();
});

describe('production mode refuses non-public targets at registration', () => {
  const port = () => new URL(rec.url).port;
  const cases: Array<[string, () => string, string]> = [
    ['loopback', () => `https://127.0.0.1:${port()}/hooks`, 'address_not_allowed'],
    ['IPv6 loopback', () => `https://[::1]:${port()}/hooks`, 'address_not_allowed'],
    ['a private 10.x address', () => 'https://10.1.2.3/hooks', 'address_not_allowed'],
    ['the cloud metadata address', () => 'https://169.254.169.254/latest/meta-data', 'address_not_allowed'],
    ['localhost (a name resolving to loopback)', () => `https://localhost:${port()}/hooks`, 'address_not_allowed'],
    ['a name resolving to a private address', () => 'https://private.example.test/hooks', 'address_not_allowed'],
    ['a name with one public and one private address', () => 'https://mixed.example.test/hooks', 'address_not_allowed'],
    ['the metadata address, IPv4-translated', () => 'https://[::ffff:0:a9fe:a9fe]/hooks', 'address_not_allowed'],
    ['the metadata address, 6to4', () => 'https://[2002:a9fe:a9fe::1]/hooks', 'address_not_allowed'],
    ['the metadata address, local-use NAT64', () => 'https://[64:ff9b:1::a9fe:a9fe]/hooks', 'address_not_allowed'],
    ['a name resolving to an IPv4-translated address', () => 'https://translated.example.test/hooks', 'address_not_allowed'],
    ['a name resolving to a 6to4 address', () => 'https://sixtofour.example.test/hooks', 'address_not_allowed'],
    ['a name resolving to a NAT64 address', () => 'https://nat64.example.test/hooks', 'address_not_allowed'],
    ['a name that does not resolve', () => 'https://no-such-host.invalid/hooks', 'unresolvable'],
    ['plain http', () => 'http://hooks.example.com/in', 'scheme_not_allowed'],
  ];

  it.each(cases)('refuses %s with 400 on url', async (_what, url, issue) => {
    const ws = newId('wsp');
    const res = await call(prod.url, 'POST', `/admin/v1/workspaces/${ws}/webhook-endpoints`, { ws, json: { url: url(), events: ['booking.created'] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: expect.any(String), details: [{ field: 'url', issue }] });
    const stored = await db.adminPool.query('SELECT count(*)::int AS n FROM webhook_dispatch.endpoints WHERE workspace_id = $1', [ws]);
    expect(stored.rows[0].n).toBe(0);
  });
});

describe('production mode refuses them again at send time, without connecting', () => {
  it('records address_not_allowed for endpoints registered earlier (e.g. in local mode) and never reaches the receiver', async () => {
    const ws = newId('wsp');
    const box = createSecretBox({ key: SECRETS_KEY });
    const port = new URL(rec.url).port;
    const urls = [
      `https://127.0.0.1:${port}/hooks`,
      `https://localhost:${port}/hooks`,
      `https://[::ffff:127.0.0.1]:${port}/hooks`,
      'https://10.0.0.1/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://metadata.example.test/hooks',
      'https://[::ffff:0:a9fe:a9fe]/hooks',
      'https://[2002:a9fe:a9fe::1]/hooks',
      'https://[64:ff9b:1::a9fe:a9fe]/hooks',
      'https://nat64.example.test/hooks',
    ];
    // Rows as a local-mode instance would have stored them: production mode must still refuse to send.
    for (const url of urls) {
      const id = newId('whe');
      await db.adminPool.query(
        `INSERT INTO webhook_dispatch.endpoints (id, workspace_id, url, events, secret_sealed) VALUES ($1, $2, $3, '{booking.created}', $4)`,
        [id, ws, url, box.seal(generateWebhookSecret(), id)],
      );
    }
    await pub.publish('booking.created', ws);
    const list = await waitFor(async () => {
      const all = await deliveriesOf(prod.url, ws);
      return all.length === urls.length && all.every((d) => d.status === 'failed') ? all : null;
    }, { timeoutMs: 10000 });
    for (const d of list) {
      expect(d.attempts.map((a: any) => [a.status_code, a.error_kind])).toEqual([
        [null, 'address_not_allowed'],
        [null, 'address_not_allowed'],
      ]);
    }
    expect(rec.connections()).toBe(0);
    expect(rec.requests).toHaveLength(0);
  });
});

describe('the sender connects to the address it checked', () => {
  it('in local mode sends to loopback, connecting to the address the guarded lookup returned', async () => {
    const sender = createWebhookSender({ mode: 'local', timeoutMs: 2000, resolveAll });
    try {
      const port = new URL(rec.url).port;
      // The name exists only in the fake DNS: the request can only arrive if the socket used our answer.
      const sent = await sender.send(`http://rebind.example.test:${port}/hooks`, { 'content-type': 'application/json' }, '{}');
      expect(sent.result).toEqual({ kind: 'response', statusCode: 200 });
      expect(rec.requests.at(-1)?.headers.host).toBe(`rebind.example.test:${port}`);
    } finally {
      sender.close();
    }
  });

  it('in production mode refuses the same name before any connection', async () => {
    const sender = createWebhookSender({ mode: 'production', timeoutMs: 2000, resolveAll });
    try {
      const before = rec.connections();
      const port = new URL(rec.url).port;
      const sent = await sender.send(`https://rebind.example.test:${port}/hooks`, {}, '{}');
      expect(sent.result).toMatchObject({ kind: 'error', errorKind: 'address_not_allowed' });
      expect(rec.connections()).toBe(before);
    } finally {
      sender.close();
    }
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const redirecting = await startReceiver(() => ({ status: 302, headers: { location: 'http://169.254.169.254/' } }));
    const sender = createWebhookSender({ mode: 'local', timeoutMs: 2000 });
    try {
      const sent = await sender.send(redirecting.url, {}, '{}');
      expect(sent.result).toEqual({ kind: 'response', statusCode: 302 });
      expect(redirecting.requests).toHaveLength(1);
    } finally {
      sender.close();
      await redirecting.close();
    }
  });
});
