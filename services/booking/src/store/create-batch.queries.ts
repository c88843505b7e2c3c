import type { Pool } from 'pg';
import { pgErrorCode } from '@sched/db';
import { createGroupCommit, type GroupCommit } from '@sched/group-commit';
import type { BookingRecord } from '../domain/booking';
import type { EventEnvelope } from '@sched/messaging';

/**
 * One create as booking.create_bookings (migration 0003) reads it: every value computed here, the function
 * only decides which answer applies. `key_id` null: no Idempotency-Key (no lock, lookup or key row).
 */
export interface CreateBatchRow {
  key_id: string | null;
  lock_key: string | null;
  fingerprint: string | null;
  retention_s: number;
  id: string;
  workspace_id: string;
  source: string;
  invitation_id: string | null;
  event_type_id: string;
  host_id: string;
  start_at: string;
  end_at: string;
  blocked_from: string;
  blocked_to: string;
  guest_name: string;
  guest_email: string;
  guest_timezone: string;
  meeting_type: string;
  /** The caller's JSON text, stored as `json` (keeps key order). */
  metadata: string;
  created_at: string;
  event_id: string;
  event: string;
  /** The stored answers (JSON text): 201 when the insert takes, 409 slot_unavailable when it overlaps. */
  created_body: string;
  conflict_body: string;
}

export type CreateBatchResult =
  | { outcome: 'in_progress' }
  | { outcome: 'found'; status: number; body: string; fingerprint: string; sealed: boolean }
  | { outcome: 'created' | 'conflict'; status: number; body: string };

export function createBatchRow(args: {
  booking: BookingRecord;
  event: EventEnvelope;
  key: { id: string; lockKey: string; fingerprint: string; retentionMs: number } | undefined;
  createdBody: string;
  conflictBody: string;
}): CreateBatchRow {
  const { booking: b, event, key } = args;
  return {
    key_id: key?.id ?? null,
    lock_key: key?.lockKey ?? null,
    fingerprint: key?.fingerprint ?? null,
    retention_s: (key?.retentionMs ?? 0) / 1000,
    id: b.id,
    workspace_id: b.workspaceId,
    source: b.source,
    invitation_id: b.invitationId,
    event_type_id: b.eventTypeId,
    host_id: b.hostId,
    start_at: b.startAt.toISOString(),
    end_at: b.endAt.toISOString(),
    blocked_from: b.blockedFrom.toISOString(),
    blocked_to: b.blockedTo.toISOString(),
    guest_name: b.guest.name,
    guest_email: b.guest.email,
    guest_timezone: b.guest.timezone,
    meeting_type: b.meetingType,
    metadata: JSON.stringify(b.metadata),
    created_at: b.createdAt.toISOString(),
    event_id: event.id,
    event: JSON.stringify(event),
    created_body: args.createdBody,
    conflict_body: args.conflictBody,
  };
}

interface ResultRow {
  item_index: number;
  outcome: 'in_progress' | 'found' | 'created' | 'conflict';
  response_status: number | null;
  response_body: string | null;
  response_fingerprint: string | null;
  response_sealed: boolean | null;
}

/** Deadlock between two batches (each waiting on the other's overlapping Booking) or a serialization failure. */
const retryAlone = (err: unknown) => pgErrorCode(err) === '40P01' || pgErrorCode(err) === '40001';

export type CreateBatcher = GroupCommit<CreateBatchRow, CreateBatchResult>;

/**
 * Group commit for creates: the creates that arrive while earlier batches run share one call of
 * booking.create_bookings, one round trip and one commit for all. A deadlock between two batches runs
 * their items again one by one.
 */
export function createBookingBatcher(opts: { pool: Pool; outboxChannel: string; maxInFlight: number; maxBatch: number }): CreateBatcher {
  return createGroupCommit<CreateBatchRow, CreateBatchResult>({
    maxInFlight: opts.maxInFlight,
    maxBatch: opts.maxBatch,
    keyOf: (row) => row.key_id ?? undefined,
    retryAlone,
    run: async (rows) => {
      const { rows: results } = await opts.pool.query<ResultRow>({
        name: 'booking_create_bookings',
        text: 'SELECT item_index, outcome, response_status, response_body, response_fingerprint, response_sealed FROM booking.create_bookings($1::jsonb, $2)',
        values: [JSON.stringify(rows), opts.outboxChannel],
      });
      const answers = new Array<CreateBatchResult>(rows.length);
      for (const r of results) answers[r.item_index] = toResult(r);
      return answers;
    },
  });
}

function toResult(r: ResultRow): CreateBatchResult {
  switch (r.outcome) {
    case 'in_progress':
      return { outcome: 'in_progress' };
    case 'found':
      return { outcome: 'found', status: r.response_status!, body: r.response_body!, fingerprint: r.response_fingerprint!, sealed: r.response_sealed === true };
    default:
      return { outcome: r.outcome, status: r.response_status!, body: r.response_body! };
  }
}
