import { newId } from '@sched/contracts';
import { createTestDatabase, testAmqp, waitFor, type TestAmqp, type TestDatabase } from '@sched/testing';
import {
  cleanupBroker,
  createEndpoint,
  deliveriesOf,
  workerIdle,
  FAST_POLL,
  startDispatch,
  startPublisher,
  startReceiver,
  type DispatchUnderTest,
  type Publisher,
  type Receiver,
} from './support/dispatch-harness';

let db: TestDatabase;
let amqp: TestAmqp;
let a: DispatchUnderTest;
let b: DispatchUnderTest;
let pub: Publisher;
let rec: Receiver;

beforeAll(async () => {
  db = await createTestDatabase({ services: ['webhook-dispatch'] });
  amqp = testAmqp();
  // Two replicas on one database and one queue, as two pods would run.
  a = await startDispatch(db, amqp, FAST_POLL);
  b = await startDispatch(db, amqp, FAST_POLL);
  pub = await startPublisher(amqp);
  rec = await startReceiver(() => ({ status: 200, delayMs: 20 }));
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await pub?.close();
  await rec?.close();
  await cleanupBroker(amqp);
  await db?.drop();
});

describe('several replicas', () => {
  it('send every delivery exactly once between them', async () => {
    const ws = newId('wsp');
    await createEndpoint(a.url, ws, rec.url, ['booking.created']);
    const ids = new Set<string>();
    for (let i = 0; i < 30; i++) ids.add((await pub.publish('booking.created', ws)).id);
    await waitFor(async () => (await deliveriesOf(b.url, ws, '?status=succeeded&limit=100')).length === 30, { timeoutMs: 15000 });
    await Promise.all([workerIdle(a, a.logs.length), workerIdle(b, b.logs.length)]);
    const sent = rec.requests.map((r) => String(r.headers['webhook-id']));
    expect(sent).toHaveLength(30);
    expect(new Set(sent)).toEqual(ids);
    // Each success was recorded by exactly one of the two replicas.
    const sentBy = (logs: string[]) => logs.filter((l) => l.includes('"webhook delivered"')).length;
    expect(sentBy(a.logs) + sentBy(b.logs)).toBe(30);
  });

  it("pick up a delivery claimed by a replica that died, once its lease expires, and not before", async () => {
    const ws = newId('wsp');
    const { id: endpointId } = await createEndpoint(a.url, ws, rec.url, ['booking.created']);
    const before = rec.requests.length;
    const eventId = newId('wev');
    // What a crashed replica leaves behind: a due delivery it leased for 1.5 s and never finished.
    await db.adminPool.query(
      `INSERT INTO webhook_dispatch.deliveries (id, workspace_id, endpoint_id, event_id, event_type, body, next_attempt_at, locked_until, claim_token)
       VALUES ($1, $2, $3, $4, 'booking.created', '{}', now(), now() + interval '1500 milliseconds', 'dead-replica:1')`,
      [newId('whd'), ws, endpointId, eventId],
    );
    const leasedAt = Date.now();
    // The first request for it, whenever it comes, comes after the lease: that is "not before".
    const got = await waitFor(() => rec.requests.find((r) => r.headers['webhook-id'] === eventId), { timeoutMs: 10000 });
    expect(rec.requests.indexOf(got)).toBe(before);
    expect(got.at - leasedAt).toBeGreaterThanOrEqual(1400);
    await waitFor(async () => (await deliveriesOf(a.url, ws))[0]?.status === 'succeeded');
    await Promise.all([workerIdle(a, a.logs.length), workerIdle(b, b.logs.length)]);
    expect(rec.requests.filter((r) => r.headers['webhook-id'] === eventId)).toHaveLength(1);
  });
});
