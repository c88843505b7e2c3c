import { DEFAULT_LIST_LIMIT, DomainError, parseTimestamp, toTimestamp, type ListBookingsQuery } from '@sched/contracts';
import type { CursorCodec } from '@sched/pagination';
import { toPage } from '@sched/pagination';
import type { BookingRecord } from './booking';

/** The endpoint a cursor is bound to, with its filters (decisions.md §5). */
const LIST_ENDPOINT = 'GET /v1/bookings';

export interface BookingListReader {
  (p: {
    workspaceId: string;
    status?: ListBookingsQuery['status'];
    startsFrom?: Date;
    startsTo?: Date;
    eventTypeId?: string;
    after?: { startAt: Date; id: string };
    limit: number;
  }): Promise<BookingRecord[]>;
}

const badCursor = () => new DomainError('invalid_request', { message: 'The cursor is not valid for this list.', details: [{ field: 'cursor', issue: 'invalid_format' }] });

/** A signed position that still fails our own shape check is refused too (e.g. made by an older release). */
function positionFrom(raw: unknown): { startAt: Date; id: string } {
  const p = raw as { s?: unknown; i?: unknown } | null;
  const startAt = typeof p?.s === 'string' ? parseTimestamp(p.s) : null;
  if (!startAt || typeof p?.i !== 'string') throw badCursor();
  return { startAt, id: p.i };
}

/**
 * One page of Bookings, ascending by start_at then id, keyset-paginated. The cursor is bound to the
 * filters (not to `limit`: a caller may change the page size between pages).
 */
export async function listBookingsPage(
  deps: { read: BookingListReader; cursors: CursorCodec },
  workspaceId: string,
  query: ListBookingsQuery,
): Promise<{ items: BookingRecord[]; nextCursor: string | null }> {
  const filters = {
    status: query.status,
    starts_from: query.starts_from ? toTimestamp(query.starts_from) : undefined,
    starts_to: query.starts_to ? toTimestamp(query.starts_to) : undefined,
    event_type_id: query.event_type_id,
  };
  const after = query.cursor === undefined ? undefined : positionFrom(deps.cursors.decode(LIST_ENDPOINT, filters, query.cursor));
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const rows = await deps.read({
    workspaceId,
    status: query.status,
    startsFrom: query.starts_from,
    startsTo: query.starts_to,
    eventTypeId: query.event_type_id,
    after,
    limit: limit + 1,
  });
  const page = toPage(rows, limit, (b) => ({ s: toTimestamp(b.startAt), i: b.id }));
  return { items: page.items, nextCursor: page.next ? deps.cursors.encode(LIST_ENDPOINT, filters, page.next) : null };
}
