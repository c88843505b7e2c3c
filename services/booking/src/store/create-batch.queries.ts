import type { Pool } from 'pg';
import { DomainError } from '@sched/contracts';
import { pgErrorCode } from '@sched/db';
import { createGroupCommit, type GroupCommit } from '@sched/group-commit';
import { dataAnswer, DEFAULT_RETENTION_MS, defaultStorableError } from '@sched/idempotency';
import { toBookingResource } from '../domain/booking';
import type { BookingCreates, CreateWrite, CreateWritten } from '../domain/ports';
import { announcementEnvelope, bookingInternal } from '../events/booking-events';

/**
 * One create as booking.create_bookings (migration 0006) reads it. Every value is computed here; the function
 * writes them and says which way the write ended. Key fields null: no Idempotency-Key (no protocol, no key row).
 */
export interface CreateBatchRow {
  kind: CreateWrite['kind'];
  workspace_id: string;
  key_id: string | null;
  lock_key: string | null;
  fingerprint: string | null;
  retention_s: number;
  /** kind 'insert': the Booking's columns, its event, and the answers stored when it was inserted / refused. */
  id?: string;
  source?: string;
  invitation_id?: string | null;
  event_type_id?: string;
  host_id?: string;
  start_at?: string;
  end_at?: string;
  blocked_from?: string;
  blocked_to?: string;
  guest_name?: string;
  guest_email?: string;
  guest_timezone?: string;
  meeting_type?: string;
  /** The caller's JSON text, stored as `json` (keeps key order). */
  metadata?: string;
  created_at?: string;
  event_id?: string;
  event?: string;
  created_body?: string | null;
  conflict_body?: string | null;
  /** kind 'refuse': the refusal's stored answer. */
  refusal_status?: number;
  refusal_body?: string;
}

/** The answer a keyed create stores when another create won its slot: made once (an Error's stack is not free). */
const SLOT_TAKEN = new DomainError('slot_unavailable');

/**
 * JSON text of a stored answer's envelope cut where `marks` (string values put in the envelope) are written:
 * joined with other JSON values in their places, the pieces are the bytes JSON.stringify of the envelope with
 * those values gives. The envelopes stay @sched/idempotency's; per create only the Booking and the request
 * id are serialised into them (the Booking once, for the stored 201 and not again).
 */
function envelopePieces(envelope: unknown, marks: string[]): string[] {
  let text = JSON.stringify(envelope);
  const pieces: string[] = [];
  for (const mark of marks) {
    const at = text.indexOf(JSON.stringify(mark));
    if (at < 0) throw new Error(`envelopePieces: ${JSON.stringify(mark)} is not in ${text}`);
    pieces.push(text.slice(0, at));
    text = text.slice(at + JSON.stringify(mark).length);
  }
  pieces.push(text);
  return pieces;
}
const DATA_MARK = '\u0000data\u0000';
const REQUEST_ID_MARK = '\u0000request_id\u0000';
/** dataAnswer(201, Booking, request id).body: [before the Booking, between it and the request id, after]. */
const CREATED = envelopePieces(dataAnswer(201, DATA_MARK, REQUEST_ID_MARK).body, [DATA_MARK, REQUEST_ID_MARK]) as [string, string, string];
/** defaultStorableError(SLOT_TAKEN, request id).body: [before the request id, after]. */
const CONFLICT = envelopePieces(defaultStorableError(SLOT_TAKEN, REQUEST_ID_MARK)!.body, [REQUEST_ID_MARK]) as [string, string];

/**
 * The row of one write; the stored answers are @sched/idempotency's envelopes, as the route sends them.
 * Each row is written out field by field, not spread from a common part: on Node 20 (V8 11.3) every property
 * written after a spread in an object literal costs about a microsecond on this machine (a runtime call per
 * property), 45 µs for this row. The Booking is put in API form once, for its event and its stored 201, and
 * each of its timestamps is written as text once (the row's columns take the resource's and the event's).
 */
export function createBatchRow(create: CreateWrite): CreateBatchRow {
  const { key, requestId } = create;
  const retention = DEFAULT_RETENTION_MS / 1000;
  switch (create.kind) {
    case 'fail':
      return { kind: 'fail', workspace_id: keyedWorkspace(create), key_id: key?.id ?? null, lock_key: key?.lockKey ?? null, fingerprint: key?.fingerprint ?? null, retention_s: retention };
    case 'refuse': {
      const answer = defaultStorableError(create.refusal, requestId);
      if (!answer) throw new Error(`a refusal must be a storable 4xx DomainError (${create.refusal.code})`);
      return {
        kind: 'refuse',
        workspace_id: keyedWorkspace(create),
        key_id: key?.id ?? null,
        lock_key: key?.lockKey ?? null,
        fingerprint: key?.fingerprint ?? null,
        retention_s: retention,
        refusal_status: answer.status,
        refusal_body: JSON.stringify(answer.body),
      };
    }
    case 'insert': {
      const b = create.booking;
      // The announcement is of this Booking (booking.created): its resource serves the event and the stored 201.
      const resource = toBookingResource(b);
      const internal = bookingInternal(b);
      const own = create.announcement.booking === b;
      const event = announcementEnvelope(create.announcement, own ? resource : undefined, own ? internal : undefined);
      const requestIdJson = key && JSON.stringify(requestId);
      return {
        kind: 'insert',
        workspace_id: b.workspaceId,
        key_id: key?.id ?? null,
        lock_key: key?.lockKey ?? null,
        fingerprint: key?.fingerprint ?? null,
        retention_s: retention,
        id: b.id,
        source: b.source,
        invitation_id: b.invitationId,
        event_type_id: b.eventTypeId,
        host_id: b.hostId,
        // toTimestamp is toISOString: the resource's and the event's texts are the columns' too.
        start_at: resource.start_at,
        end_at: resource.end_at,
        blocked_from: internal.blocked_from,
        blocked_to: internal.blocked_to,
        guest_name: b.guest.name,
        guest_email: b.guest.email,
        guest_timezone: b.guest.timezone,
        meeting_type: b.meetingType,
        metadata: JSON.stringify(b.metadata),
        created_at: resource.created_at,
        event_id: event.id,
        event: JSON.stringify(event),
        created_body: key && CREATED[0] + JSON.stringify(resource) + CREATED[1] + requestIdJson + CREATED[2],
        conflict_body: key && CONFLICT[0] + requestIdJson + CONFLICT[1],
      };
    }
  }
}

/** The workspace of a refusal or a failure: only keyed ones reach the database (see bookingCreates). */
function keyedWorkspace(create: CreateWrite & { kind: 'refuse' | 'fail' }): string {
  if (!create.key) throw new Error('a refusal or failure without a key has nothing to write');
  return create.workspaceId;
}

interface ResultRow {
  item_index: number;
  outcome: 'in_progress' | 'found' | 'created' | 'slot_taken' | 'refused' | 'failed';
  response_status: number | null;
  response_body: string | null;
  response_fingerprint: string | null;
  response_sealed: boolean | null;
}

/** Deadlock between two batches (each waiting on the other's overlapping Booking) or a serialization failure. */
const retryAlone = (err: unknown) => pgErrorCode(err) === '40P01' || pgErrorCode(err) === '40001';

export interface BookingCreatesStore extends BookingCreates {
  /** The group commit's counters (tests, metrics). */
  stats: GroupCommit<CreateBatchRow, CreateWritten>['stats'];
}

/**
 * The store of creates (domain BookingCreates), group-committed: the creates that arrive while earlier
 * batches run share one call of booking.create_bookings, one round trip and one commit for all. Two
 * creates under one key never share a batch (the later one sees the first committed, or in progress). A
 * deadlock between two batches runs their items again one by one. A refusal or failure without a key has
 * nothing to write and no key to look up, so it never reaches the database.
 */
export function bookingCreates(opts: { pool: Pool; outboxChannel: string; maxInFlight: number; maxBatch: number }): BookingCreatesStore {
  const batches = createGroupCommit<CreateBatchRow, CreateWritten>({
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
      const written = new Array<CreateWritten>(rows.length);
      for (const r of results) written[r.item_index] = toWritten(r, rows[r.item_index]!);
      return written;
    },
  });
  return {
    write: async (create) => {
      if (!create.key && create.kind === 'refuse') return { kind: 'refused' };
      if (!create.key && create.kind === 'fail') return { kind: 'failed' };
      return batches.submit(createBatchRow(create));
    },
    stats: () => batches.stats(),
  };
}

function toWritten(r: ResultRow, row: CreateBatchRow): CreateWritten {
  if (r.outcome === 'created') return row.created_body ? { kind: 'created', answer: row.created_body } : { kind: 'created' };
  if (r.outcome === 'found') {
    return { kind: 'found', row: { status: r.response_status!, body: r.response_body!, fingerprint: r.response_fingerprint!, sealed: r.response_sealed === true } };
  }
  return { kind: r.outcome };
}
