import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { cleanupAmqpPrefix, createTestDatabase, freePort, testAmqp, waitFor, type TestDatabase, internalAuthorization, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { startAvailabilityStub, type AvailabilityStub } from './support/availability-stub';
import { BOOKING_QUEUES, CURSOR_SECRET, EXCHANGES, createBody } from './support/booking-harness';
import { startEventTap, type EventTap } from './support/event-tap';

/**
 * decisions.md §4: "A crash between [key record and mutation] must not lose or double either." The real
 * booking process (started through support/crash-after-commit.main.ts, which wraps its store of creates) is
 * killed right after its transaction commits and before it answers; the retry with the same key, served by
 * the restarted process (the plain src/main.ts), replays the Booking, and exactly one booking.created is published.
 */
const ROOT = path.resolve(__dirname, '../../..');
const WORKSPACE = 'wsp_CRASHCRASHCRASHCRASH1';
const API_KEY = 'key_CRASHCRASHCRASHCRASH1';

let db: TestDatabase;
let stub: AvailabilityStub;
let tap: EventTap;
const amqp = testAmqp();
let port: number;
let child: ChildProcess | undefined;
let output = '';

async function startProcess(entry: string): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      DATABASE_URL: db.urlFor('booking'),
      AMQP_URL: amqp.url,
      AMQP_PREFIX: amqp.prefix,
      AVAILABILITY_URL: stub.url,
      CURSOR_SECRET,
      INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  await waitFor(
    async () => {
      if (proc.exitCode !== null) throw new Error(`booking exited early (${proc.exitCode}): ${output}`);
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return proc;
}

function exited(proc: ChildProcess): Promise<NodeJS.Signals | number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.signalCode ?? proc.exitCode);
  return new Promise((r) => proc.once('exit', (code, signal) => r(signal ?? code)));
}

/** As the gateway forwards it: a credential for the workspace and key, request id, Idempotency-Key. */
async function post(json: unknown): Promise<Response> {
  const credential = await internalAuthorization('booking', { principal: 'api_key', workspaceId: WORKSPACE, apiKeyId: API_KEY, scopes: ['bookings:write'] });
  return fetch(`http://127.0.0.1:${port}/v1/bookings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credential, 'idempotency-key': 'crash-retry-1' },
    body: JSON.stringify(json),
  });
}

beforeAll(async () => {
  db = await createTestDatabase({ services: ['booking'] });
  stub = await startAvailabilityStub();
  tap = await startEventTap(amqp, 'test.booking-created', ['booking.created']);
  port = await freePort();
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await exited(child);
  }
  await tap.close();
  await stub.close();
  await db.drop();
  await cleanupAmqpPrefix(amqp.url, amqp.prefix, BOOKING_QUEUES, EXCHANGES).catch(() => undefined);
});

it('a create killed after commit and before reply is replayed on retry with the same key: one Booking, one booking.created', async () => {
  child = await startProcess('services/booking/test/support/crash-after-commit.main.ts');
  const body = createBody();

  // The client sees the connection die, never an answer.
  const failure = await post(body).then(
    (res) => `answered ${res.status}`,
    (err: unknown) => err,
  );
  // fetch rejects (its TypeError comes from another realm under Jest, hence the shape check).
  expect(failure).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
  expect(await exited(child)).toBe('SIGKILL');
  // The transaction had committed: the Booking and its key row are there.
  const rows = await db.adminPool.query('SELECT id FROM booking.bookings');
  expect(rows.rows).toHaveLength(1);
  expect((await db.adminPool.query('SELECT count(*)::int AS n FROM booking.idempotency_keys')).rows[0].n).toBe(1);

  child = await startProcess('services/booking/src/main.ts');
  const retry = await post(body);
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  const replayed = (await retry.json()) as any;
  expect(replayed.data.id).toBe(rows.rows[0].id);
  expect(replayed.meta.request_id).toBe(retry.headers.get('x-request-id'));
  expect((await db.adminPool.query('SELECT count(*)::int AS n FROM booking.bookings')).rows[0].n).toBe(1);

  // The restarted relay publishes the committed event; nothing publishes it twice.
  await waitFor(() => tap.messages.length >= 1, { timeoutMs: 15_000 });
  await waitFor(async () => (await db.adminPool.query('SELECT count(*)::int AS n FROM booking.outbox WHERE published_at IS NULL')).rows[0].n === 0, {
    timeoutMs: 10_000,
  });
  // Everything the relays confirmed is in the tap's queue ahead of this marker: a duplicate would be counted.
  await tap.drain();
  // Routed as a Booking made without an invitation; the message's type stays booking.created.
  expect(tap.messages.map((m) => [m.routingKey, m.body.type, m.body.data.booking.id])).toEqual([['booking.created.no_invitation', 'booking.created', replayed.data.id]]);
  expect(tap.messages[0]!.body.data.booking).toEqual(replayed.data);
}, 90_000);
