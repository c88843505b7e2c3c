import { EVENT_DATA_SCHEMAS, parseTimestamp } from '@sched/contracts';
import type { DbTx } from '@sched/db';
import type { EventEnvelope } from '@sched/messaging';
import { upsertCalendarConnection } from '../store/projection.queries';

/**
 * calendar.connection_updated → the per-host calendar state behind `bookable`. Events are applied in
 * occurred_at order: one older than the state already held is ignored.
 */
export async function handleCalendarConnectionUpdated(envelope: EventEnvelope, tx: DbTx): Promise<void> {
  const data = EVENT_DATA_SCHEMAS['calendar.connection_updated'].parse(envelope.data);
  const eventAt = parseTimestamp(envelope.occurred_at);
  if (!eventAt) throw new RangeError('calendar.connection_updated has an invalid occurred_at');
  await upsertCalendarConnection(tx, {
    workspaceId: envelope.workspace_id,
    hostId: data.host_id,
    status: data.status,
    errorCode: data.error_code,
    eventAt,
  });
}
