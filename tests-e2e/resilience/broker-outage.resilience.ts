import { settle, waitFor } from '@sched/testing';
import { bookingRows, calendarObjectsPerBooking, createMany, manyStarts, recordScenario, sleep, startRig, summarize, webhookCounts, type Rig } from './harness';

const CREATES = 500;
const OUTAGE_MS = 30_000;

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
}, 180_000);
afterAll(async () => rig?.close());

describe('broker outage: RabbitMQ stopped for 30 s during 500 creates', () => {
  it('every create succeeds (the API never waits on the broker), then every booking.created webhook arrives once and every Booking syncs', async () => {
    const starts = await manyStarts(rig.t, CREATES);
    let stoppedAt = 0;
    let restartedAt = 0;
    let outage: Promise<void> | undefined;
    let stopped: Promise<void> | undefined;

    const outcomes = await createMany(rig, starts, {
      concurrency: 8,
      onEach: async (_o, done) => {
        // The fault starts once the load is running: from the 25th answer on, the broker is gone for 30 s.
        if (done === 25 && !outage) {
          stopped = rig.rabbit.stop().then(() => {
            stoppedAt = Date.now();
          });
          outage = (async () => {
            await stopped;
            await sleep(OUTAGE_MS);
            await rig.rabbit.start();
            restartedAt = Date.now();
          })();
        }
        // Stopping RabbitMQ takes seconds, in which a fast system could answer all the rest: the load
        // waits until the broker is down, so that the creates after the 25th all run into the outage.
        if (stopped && stoppedAt === 0) await stopped;
      },
    });
    const loadEndedAt = Date.now();
    await outage;

    const during = outcomes.filter((o) => o.sentAt >= stoppedAt && o.sentAt < restartedAt);
    const created = outcomes.filter((o) => o.status === 201).map((o) => o.bookingId!);
    expect(summarize(outcomes)).toEqual({ '201': CREATES });
    // The load really ran into the outage (otherwise this proves nothing).
    expect(during.length).toBeGreaterThan(100);

    // After the broker returns: the outbox drains, webhooks and calendar writes catch up.
    const drainStart = Date.now();
    await waitFor(() => webhookCounts(rig, 'booking.created').idsPerBooking.size === CREATES, { timeoutMs: 240_000, intervalMs: 500 });
    const webhooksAt = Date.now();
    await waitFor(
      async () => {
        const { rows } = await rig.sys.db.adminPool.query<{ n: string }>(
          `SELECT count(*) AS n FROM booking.bookings WHERE workspace_id = $1 AND calendar_status = 'synced'`,
          [rig.t.workspaceId],
        );
        return Number(rows[0]!.n) === CREATES;
      },
      { timeoutMs: 240_000, intervalMs: 1000 },
    );
    const syncedAt = Date.now();
    await settle(2000, 'a late redelivery after the outage has no event of its own that says it will not come: let one arrive before counting duplicates');

    const rows = await bookingRows(rig);
    const lost = created.filter((id) => !rows.has(id));
    const hooks = webhookCounts(rig, 'booking.created');
    const wrongHookCount = created.filter((id) => hooks.idsPerBooking.get(id)?.size !== 1);
    const calendar = await calendarObjectsPerBooking(rig, created);
    const calendarDuplicates = [...calendar.values()].filter((n) => n > 1).length;
    const calendarMissing = [...calendar.values()].filter((n) => n === 0).length;
    const unpublished = await rig.sys.db.adminPool.query<{ n: string }>(`SELECT count(*) AS n FROM booking.outbox WHERE published_at IS NULL`);

    recordScenario('broker_outage', {
      fault: `RabbitMQ stop_app for ${Math.round((restartedAt - stoppedAt) / 1000)} s, from the 25th of ${CREATES} creates on`,
      requests: outcomes.length,
      answers: summarize(outcomes),
      requests_during_outage: during.length,
      '5xx_during_outage': during.filter((o) => o.status >= 500).length,
      '5xx_after_outage': outcomes.filter((o) => o.sentAt >= restartedAt && o.status >= 500).length,
      load_seconds: Math.round((loadEndedAt - (outcomes[0]?.sentAt ?? loadEndedAt)) / 100) / 10,
      create_p50_ms: percentile(outcomes.map((o) => o.ms), 50),
      create_max_ms: Math.max(...outcomes.map((o) => o.ms)),
      bookings_lost: lost.length,
      webhooks_booking_created_raw: hooks.raw,
      webhooks_booking_created_distinct: hooks.distinctIds,
      webhook_redeliveries_same_id: hooks.raw - hooks.distinctIds,
      bookings_without_exactly_one_booking_created: wrongHookCount.length,
      calendar_duplicates: calendarDuplicates,
      calendar_missing: calendarMissing,
      seconds_from_broker_back_to_all_webhooks: Math.round((webhooksAt - Math.max(restartedAt, drainStart)) / 100) / 10,
      seconds_from_broker_back_to_all_synced: Math.round((syncedAt - Math.max(restartedAt, drainStart)) / 100) / 10,
    });

    expect(lost).toEqual([]);
    expect(wrongHookCount).toEqual([]);
    expect(calendarDuplicates).toBe(0);
    expect(calendarMissing).toBe(0);
    expect(Number(unpublished.rows[0]!.n)).toBe(0);
  });
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}
