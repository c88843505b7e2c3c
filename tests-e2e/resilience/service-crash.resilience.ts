import { settle, waitFor } from '@sched/testing';
import { bookingRows, calendarObjectsPerBooking, createMany, manyStarts, recordScenario, sleep, startRig, summarize, webhookCounts, type Rig } from './harness';

const CREATES = 200;

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
}, 180_000);
afterAll(async () => rig?.close());

const syncedCount = async () => {
  const { rows } = await rig.sys.db.adminPool.query<{ n: string }>(
    `SELECT count(*) AS n FROM booking.bookings WHERE workspace_id = $1 AND calendar_status = 'synced'`,
    [rig.t.workspaceId],
  );
  return Number(rows[0]!.n);
};

describe('service crash: calendar-sync and webhook-dispatch SIGKILLed mid-load, then restarted', () => {
  it('loses nothing and writes one calendar event per Booking; each webhook-id once after dedupe', async () => {
    const starts = await manyStarts(rig.t, CREATES);
    let crash: Promise<void> | undefined;
    let killedAt = 0;
    let restartedAt = 0;
    let syncedWhenKilled = -1;
    let hooksWhenKilled = -1;

    // While calendar-sync is down, creates fail closed (503: no busy times); a client retries those.
    const outcomes = await createMany(rig, starts, {
      concurrency: 4,
      retryIf: (o) => o.status === 503,
      onEach: (_o, done) => {
        // Kill while both consumers are busy: calendar writes and deliveries run behind the creates.
        if (done === 60 && !crash) {
          crash = (async () => {
            [syncedWhenKilled, hooksWhenKilled] = [await syncedCount(), rig.receiver.received.length];
            // Every process of each: the API (calendar-sync's busy endpoint, hence the 503s) and the worker
            // (the calendar writes and the deliveries in flight), as when each was one process.
            await Promise.all([rig.sys.kill('calendar-sync'), rig.sys.kill('webhook-dispatch')]);
            killedAt = Date.now();
            await sleep(3000);
            await Promise.all([rig.sys.restart('calendar-sync'), rig.sys.restart('webhook-dispatch')]);
            restartedAt = Date.now();
          })();
        }
      },
    });
    await crash;
    const created = outcomes.filter((o) => o.status === 201).map((o) => o.bookingId!);
    const failed = outcomes.filter((o) => o.status !== 201);
    expect(created).toHaveLength(CREATES);
    // Every other answer was a clean fail-closed 503 with the error envelope, sent while a service was down.
    expect(failed.filter((o) => o.status !== 503 || !o.envelope || o.leak)).toEqual([]);
    expect(failed.filter((o) => o.sentAt < killedAt - 1000)).toEqual([]);
    // The kill really interrupted work in progress (otherwise this proves nothing).
    expect(syncedWhenKilled).toBeLessThan(CREATES);

    await waitFor(async () => (await syncedCount()) === CREATES, { timeoutMs: 240_000, intervalMs: 1000 });
    await waitFor(
      () => webhookCounts(rig, 'booking.created').idsPerBooking.size === CREATES && webhookCounts(rig, 'calendar.created').idsPerBooking.size === CREATES,
      { timeoutMs: 240_000, intervalMs: 500 },
    );
    const recoveredAt = Date.now();
    await settle(3000, 'a late redelivery of what the crashed processes held has no event of its own that says it will not come: let one arrive before counting duplicates');

    const rows = await bookingRows(rig);
    const lost = created.filter((id) => !rows.has(id));
    const calendar = await calendarObjectsPerBooking(rig, created);
    const calendarDuplicates = created.filter((id) => calendar.get(id)! > 1);
    const calendarMissing = created.filter((id) => calendar.get(id) === 0);
    const createdHooks = webhookCounts(rig, 'booking.created');
    const calendarHooks = webhookCounts(rig, 'calendar.created');
    const notOnce = (h: ReturnType<typeof webhookCounts>) => created.filter((id) => h.idsPerBooking.get(id)?.size !== 1);

    recordScenario('service_crash', {
      fault: 'SIGKILL of calendar-sync and webhook-dispatch after the 60th create answer, restarted 3 s later',
      requests: outcomes.length,
      answers: summarize(outcomes),
      synced_when_killed: syncedWhenKilled,
      webhooks_received_when_killed: hooksWhenKilled,
      '5xx_during_crash': outcomes.filter((o) => o.sentAt >= killedAt && o.sentAt < restartedAt && o.status >= 500).length,
      error_codes: countBy(failed.map((o) => `${o.status} ${o.code ?? ''}`)),
      '5xx_after_crash': outcomes.filter((o) => o.sentAt >= restartedAt && o.status >= 500).length,
      bookings_lost: lost.length,
      calendar_duplicates: calendarDuplicates.length,
      calendar_missing: calendarMissing.length,
      webhooks_raw: createdHooks.raw + calendarHooks.raw,
      webhooks_distinct: createdHooks.distinctIds + calendarHooks.distinctIds,
      webhook_redeliveries_same_id: createdHooks.raw + calendarHooks.raw - createdHooks.distinctIds - calendarHooks.distinctIds,
      bookings_without_exactly_one_booking_created: notOnce(createdHooks).length,
      bookings_without_exactly_one_calendar_created: notOnce(calendarHooks).length,
      seconds_from_restart_to_all_synced_and_delivered: Math.round((recoveredAt - restartedAt) / 100) / 10,
    });

    expect(lost).toEqual([]);
    expect(calendarDuplicates).toEqual([]);
    expect(calendarMissing).toEqual([]);
    expect(notOnce(createdHooks)).toEqual([]);
    expect(notOnce(calendarHooks)).toEqual([]);
  });
});

function countBy(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}
