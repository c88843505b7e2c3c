import { Webhook } from 'standardwebhooks';
import { newId } from '@sched/contracts';
import { waitFor } from '@sched/testing';
import {
  createEndpoint,
  deliveriesOf,
  receiverPool,
  workerIdle,
  type DispatchUnderTest,
  type Publisher,
  type Reply,
} from './support/dispatch-harness';
import { startDispatchRig, type DispatchRig } from './support/dispatch-rig';

/**
 * Events that arrive together share ingest statements, and attempts that end together share record
 * statements (store/ingest-batch.queries.ts, store/attempt-records.queries.ts): through the whole
 * service, every delivery still gets its signed webhook-id, its attempts numbered 1, 2, … and its
 * retry on the schedule, and is delivered once. The statement level (crash mid-batch, one failing
 * item) is batched-statements.test.ts's.
 */

const receivers = receiverPool();
let rig: DispatchRig;
let svc: DispatchUnderTest;
let pub: Publisher;

beforeAll(async () => {
  rig = await startDispatchRig({ receivers });
  ({ svc, pub } = rig);
});

afterAll(async () => {
  await rig?.close();
});

/**
 * 500 to the first request of each webhook-id and 200 to the next, every answer held until `holdMs`
 * after the first request of its round arrived, so that the attempts of a round end together.
 */
function failOnceThenSucceed(holdMs: number): (n: number, request: { headers: Record<string, unknown> }) => Reply {
  const failed = new Set<string>();
  let round: { answerAt: number; retries: boolean } | undefined;
  return (_n, { headers }) => {
    const id = String(headers['webhook-id']);
    const retry = failed.has(id);
    if (!round || round.retries !== retry) round = { answerAt: Date.now() + holdMs, retries: retry };
    failed.add(id);
    return { status: retry ? 200 : 500, delayMs: Math.max(0, round.answerAt - Date.now()) };
  };
}

describe('events and attempts arriving together', () => {
  it('share statements, and every delivery keeps its webhook-id, its numbered attempts and its retry', async () => {
    const ws = newId('wsp');
    const count = 10;
    // Two receivers: each fails the first attempt of every webhook, then takes the retry.
    const recA = await receivers.start(failOnceThenSucceed(300));
    const recB = await receivers.start(failOnceThenSucceed(300));
    const { secret: secretA } = await createEndpoint(svc.url, ws, recA.url, ['booking.created']);
    const { secret: secretB } = await createEndpoint(svc.url, ws, recB.url, ['booking.created']);
    const ingestBefore = svc.dispatch.ingest.stats();
    const recordsBefore = svc.dispatch.worker.records.stats();

    const events = await Promise.all(Array.from({ length: count }, () => pub.publish('booking.created', ws)));
    const ids = events.map((e) => e.id);
    const all = await waitFor(
      async () => {
        const list = await deliveriesOf(svc.url, ws, '?limit=100');
        return list.length === 2 * count && list.every((d) => d.status === 'succeeded') ? list : null;
      },
      { timeoutMs: 15000 },
    );
    await workerIdle(svc, svc.logs.length); // a wrong third attempt would have been sent by then

    const ingest = svc.dispatch.ingest.stats();
    const records = svc.dispatch.worker.records.stats();
    // Fewer statements than items: events and attempts did share them.
    expect(ingest.items - ingestBefore.items).toBe(count);
    expect(ingest.batches - ingestBefore.batches).toBeLessThan(count);
    expect(records.items - recordsBefore.items).toBe(4 * count);
    expect(records.batches - recordsBefore.batches).toBeLessThan(4 * count);

    for (const [rec, secret] of [
      [recA, secretA],
      [recB, secretB],
    ] as const) {
      // Each event twice (the failure and the retry), signed, same id and body both times.
      expect(rec.requests).toHaveLength(2 * count);
      const byId = new Map<string, string[]>();
      for (const r of rec.requests) {
        const id = String(r.headers['webhook-id']);
        byId.set(id, [...(byId.get(id) ?? []), r.body]);
        expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      }
      expect([...byId.keys()].sort()).toEqual([...ids].sort());
      for (const bodies of byId.values()) expect(new Set(bodies).size).toBe(1);
    }
    for (const d of all) {
      expect(d).toMatchObject({ status: 'succeeded', attempt_count: 2 });
      expect(d.attempts.map((a: any) => [a.number, a.status_code, a.error_kind])).toEqual([
        [1, 500, 'http_status'],
        [2, 200, null],
      ]);
    }
    expect(svc.logs.filter((l) => l.includes('"webhook delivered"') && ids.some((id) => l.includes(id)))).toHaveLength(2 * count);
  });
});
