import { idPattern, newId } from '@sched/contracts';
import { createPool } from '@sched/db';
import type { Pool } from 'pg';
import { createTestDatabase, testAmqp, waitFor, waitForLog, type TestAmqp, type TestDatabase } from '@sched/testing';
import { DELIVERIES_CHANNEL } from '../src/store/delivery.queries';
import { insertEventDeliveries } from '../src/store/ingest.queries';
import {
  cleanupBroker,
  createEndpoint,
  deliveriesOf,
  startDispatch,
  startPublisher,
  receiverPool,
  workerIdle,
  FAST_POLL,
  type DispatchUnderTest,
  type Publisher,
} from './support/dispatch-harness';

/**
 * The one ingest statement (inbox row + deliveries + NOTIFY for what it leaves) and the deliveries
 * it claims itself (claim at insert): sent as soon as it returns, without a NOTIFY round trip and a
 * claim query; recovered by any replica when the one that claimed them dies; never duplicated by a
 * redelivered event; the per-endpoint cap still holds when statements of one endpoint overlap.
 */

let db: TestDatabase;
let amqp: TestAmqp;
let svc: DispatchUnderTest;
let pub: Publisher;
let servicePool: Pool;
const receivers = receiverPool();
const receiver = receivers.start;

/** Deliveries the worker's rounds claimed (they log how many at debug level). */
function claimedByRounds(logs: string[]): number {
  return logs
    .filter((l) => l.includes('"delivery worker round"'))
    .map((l) => JSON.parse(l) as { claimed: number })
    .reduce((n, l) => n + l.claimed, 0);
}

const event = (ws: string, id = newId('wev')) => ({ workspaceId: ws, eventId: id, eventType: 'booking.created', body: '{"test":true}' });

beforeAll(async () => {
  db = await createTestDatabase({ services: ['webhook-dispatch'] });
  amqp = testAmqp();
  // Room (64 by default) for every overlapping statement of the cap test to claim.
  svc = await startDispatch(db, amqp, { WEBHOOK_PER_ENDPOINT_CONCURRENCY: '2', ...FAST_POLL });
  pub = await startPublisher(amqp);
  // Connections for the overlapping transactions of the cap test.
  servicePool = createPool(db.urlFor('webhook-dispatch'), { max: 10, applicationName: 'ingest-claims-test', logger: { error: () => undefined } });
});

afterAll(async () => {
  await svc?.stop();
  await servicePool?.end();
  await pub?.close();
  await receivers.closeAll();
  await cleanupBroker(amqp);
  await db?.drop();
});

describe('claim at insert', () => {
  it('sends a new delivery straight from the consumer: no worker round claims it', async () => {
    const ws = newId('wsp');
    const rec = await receiver();
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    // Count what rounds claim from here on (once the first has run; none had anything to claim).
    await waitForLog(svc.logs, { message: 'delivery worker round' });
    const before = claimedByRounds(svc.logs);
    const sent = await pub.publish('booking.created', ws);
    const got = await waitFor(() => rec.requests[0], { timeoutMs: 10000 });
    expect(got.headers['webhook-id']).toBe(sent.id);
    const [delivery] = await waitFor(async () => {
      const list = await deliveriesOf(svc.url, ws);
      return list[0]?.status === 'succeeded' ? list : null;
    });
    expect(delivery.id).toMatch(idPattern('whd'));
    expect(delivery.attempt_count).toBe(1);
    expect(claimedByRounds(svc.logs)).toBe(before);
  });

  it('a delivery claimed at insert by a replica that then died is sent by another once the lease expires, and not before', async () => {
    const ws = newId('wsp');
    const rec = await receiver();
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    const e = event(ws);
    // The ingest statement of a replica that commits and dies before sending: leased to it for 1.5 s.
    const { fresh, deliveries: rows } = await insertEventDeliveries(servicePool, e, { token: 'dead-replica:1', room: 4, perEndpoint: 2, leaseMs: 1500 });
    const leasedAt = Date.now();
    expect(fresh).toBe(true);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.claimed).toBe(true);
    expect(rows[0]!.delivery.id).toMatch(idPattern('whd'));
    // The first request, whenever it comes, comes after the lease: that is "not before".
    const got = await waitFor(() => rec.requests[0], { timeoutMs: 10000 });
    expect(got.headers['webhook-id']).toBe(e.eventId);
    expect(got.at - leasedAt).toBeGreaterThanOrEqual(1400);
    expect(got.body).toBe(e.body);
    await waitFor(async () => (await deliveriesOf(svc.url, ws))[0]?.status === 'succeeded');
    await workerIdle(svc, svc.logs.length);
    expect(rec.requests).toHaveLength(1);
  });

  it('announces only rows it left unclaimed, with a NOTIFY on commit', async () => {
    const ws = newId('wsp');
    const rec = await receiver();
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    const listener = await servicePool.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.payload === 'test-marker' ? 'marker' : n.channel));
    try {
      await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
      await insertEventDeliveries(servicePool, event(ws), { token: 'dead-replica:4', room: 1, perEndpoint: 2, leaseMs: 60000 });
      // NOTIFYs reach a listener in commit order: once a marker sent after the insert is heard, the insert's would have been too.
      await db.adminPool.query(`SELECT pg_notify('${DELIVERIES_CHANNEL}', 'test-marker')`);
      await waitFor(() => heard.includes('marker'), { timeoutMs: 2000 });
      expect(heard).toEqual(['marker']);
      await insertEventDeliveries(servicePool, event(ws), { token: '', room: 0, perEndpoint: 2, leaseMs: 60000 });
      await waitFor(() => heard.length === 2, { timeoutMs: 2000 });
      expect(heard).toEqual(['marker', DELIVERIES_CHANNEL]);
    } finally {
      await listener.query(`UNLISTEN ${DELIVERIES_CHANNEL}`);
      listener.release();
    }
  });

  it('a redelivered event makes no second delivery: its inbox row is found, even for an endpoint added since', async () => {
    const ws = newId('wsp');
    const rec = await receiver();
    const later = await receiver();
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    const e = event(ws);
    const first = await insertEventDeliveries(servicePool, e, { token: '', room: 0, perEndpoint: 2, leaseMs: 60000 });
    expect(first.fresh).toBe(true);
    expect(first.deliveries.map((r) => r.claimed)).toEqual([false]);
    // Unclaimed: announced by NOTIFY and sent by the worker.
    await waitFor(() => rec.requests.length === 1, { timeoutMs: 10000 });
    // Endpoints created after the event was consumed do not get it, redelivered or not.
    await createEndpoint(svc.url, ws, later.url, ['booking.created']);
    const from = svc.logs.length;
    const again = await insertEventDeliveries(servicePool, e, { token: 'some-replica:2', room: 4, perEndpoint: 2, leaseMs: 60000 });
    expect(again).toEqual({ fresh: false, deliveries: [] });
    await workerIdle(svc, from);
    expect(rec.requests).toHaveLength(1);
    expect(later.requests).toHaveLength(0);
    expect(await deliveriesOf(svc.url, ws)).toHaveLength(1);
  });

  it('records the inbox row of an event no endpoint wants, so its redelivery is known as one', async () => {
    const ws = newId('wsp');
    const e = event(ws);
    expect(await insertEventDeliveries(servicePool, e, { token: '', room: 0, perEndpoint: 2, leaseMs: 60000 })).toEqual({ fresh: true, deliveries: [] });
    expect(await insertEventDeliveries(servicePool, e, { token: '', room: 0, perEndpoint: 2, leaseMs: 60000 })).toEqual({ fresh: false, deliveries: [] });
    const inbox = await db.adminPool.query('SELECT type FROM webhook_dispatch.inbox WHERE event_id = $1', [e.eventId]);
    expect(inbox.rows).toEqual([{ type: 'booking.created' }]);
  });

  it('claims for no endpoint that does not want the kind, and leaves the others to the worker when there is no room', async () => {
    const ws = newId('wsp');
    const a = await receiver();
    const b = await receiver();
    const other = await receiver();
    const { id: aId } = await createEndpoint(svc.url, ws, a.url, ['booking.created']);
    const { id: bId } = await createEndpoint(svc.url, ws, b.url, ['booking.created', 'booking.cancelled']);
    await createEndpoint(svc.url, ws, other.url, ['booking.cancelled']);
    // Room for one: one endpoint's row is claimed, the other's is left for the worker.
    const { deliveries: rows } = await insertEventDeliveries(servicePool, event(ws), { token: 'dead-replica:3', room: 1, perEndpoint: 2, leaseMs: 60000 });
    expect(rows.map((r) => r.delivery.endpointId).sort()).toEqual([aId, bId].sort());
    expect(rows.filter((r) => r.claimed)).toHaveLength(1);
    const unclaimed = rows.find((r) => !r.claimed)!;
    const unclaimedReceiver = unclaimed.delivery.endpointId === aId ? a : b;
    await waitFor(() => unclaimedReceiver.requests.length === 1, { timeoutMs: 10000 });
    await workerIdle(svc, svc.logs.length);
    expect(a.requests.length + b.requests.length).toBe(1);
    expect(other.requests).toHaveLength(0);
  });

  it('keeps the per-endpoint cap when ingest statements of one endpoint overlap: the claims over it are given back and sent later', async () => {
    const ws = newId('wsp');
    const slow = await receiver(() => ({ status: 200, delayMs: 800 }));
    await createEndpoint(svc.url, ws, slow.url, ['booking.created']);
    const claims = svc.dispatch.worker.ingest;
    const count = 6;
    // Every statement runs before any of them commits (each in a transaction held open until all
    // have run, as concurrent consumer messages may overlap), so each one sees the endpoint idle and
    // claims its row: the replica's own count must keep all but 2 of them from being sent now.
    let arrived = 0;
    let release!: () => void;
    const allStatementsDone = new Promise<void>((r) => (release = r));
    const events = Array.from({ length: count }, () => event(ws));
    await Promise.all(
      events.map(async (e) => {
        const ticket = claims.open(4);
        const client = await servicePool.connect();
        try {
          await client.query('BEGIN');
          const { deliveries } = await insertEventDeliveries(client, e, ticket);
          ticket.take(deliveries.filter((r) => r.claimed).map((r) => r.delivery));
          if (++arrived === count) release();
          await allStatementsDone;
          await client.query('COMMIT');
        } finally {
          client.release();
        }
        ticket.settle(true);
      }),
    );
    await waitFor(() => slow.requests.length >= 1, { timeoutMs: 10000 });
    const firstAnswer = slow.requests[0]!.at + 800;
    await waitFor(() => slow.requests.length === count, { timeoutMs: 15000 });
    expect(slow.requests.filter((r) => r.at < firstAnswer - 50).length).toBeLessThanOrEqual(2);
    expect(new Set(slow.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set(events.map((e) => e.eventId)));
    await waitFor(async () => (await deliveriesOf(svc.url, ws, '?status=succeeded')).length === count, { timeoutMs: 10000 });
  });
});

describe('commits', () => {
  const setting = async (pool: Pool) => (await pool.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`)).rows[0]!.s;

  it('the ingest statement, which the broker acknowledgement waits for, commits durably; the worker (attempt records, leases) without waiting for the flush', async () => {
    // Several at once, so that more than one connection of each pool answers.
    const service = await Promise.all(Array.from({ length: 3 }, () => setting(svc.service.pool)));
    const worker = await Promise.all(Array.from({ length: 3 }, () => setting(svc.dispatch.workerPool)));
    expect(service).toEqual(['on', 'on', 'on']);
    expect(worker).toEqual(['off', 'off', 'off']);
  });
});
