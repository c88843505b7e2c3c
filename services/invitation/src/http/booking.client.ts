import { bookingSchema, toTimestamp } from '@sched/contracts';
import { onBehalfOf, toUpstreamDomainError, UpstreamError, type InternalClient } from '@sched/http';
import { z } from 'zod';
import type { BookingOutcome, BookingService } from '../domain/ports';
import { answerError } from './upstream-answer';

const createdAnswer = z.object({ data: bookingSchema });

/** booking's internal create (contracts internalCreateBookingSchema): same answers as POST /v1/bookings. */
export function createBookingClient(client: InternalClient): BookingService {
  return {
    async create(ws, body, idempotencyKey): Promise<BookingOutcome> {
      let res;
      try {
        res = await client.request('POST', `/internal/v1/workspaces/${encodeURIComponent(ws)}/bookings`, {
          json: { ...body, start_at: toTimestamp(body.start_at) },
          headers: { 'idempotency-key': idempotencyKey },
          // The page's visitor, vouched for this workspace and (booking checks it) this invitation only.
          onBehalf: onBehalfOf({ principal: 'booking_page', workspaceId: ws, invitationId: body.invitation_id ?? undefined }),
        });
      } catch (err) {
        if (err instanceof UpstreamError) return { outcome: 'unknown', error: toUpstreamDomainError(err) };
        throw err;
      }
      if (res.status === 201 || res.status === 200) {
        const parsed = createdAnswer.safeParse(res.body);
        // It said yes, so a Booking exists, even if we cannot read its answer: booking.created will count it.
        if (!parsed.success) return { outcome: 'unknown', error: answerError(res) };
        const b = parsed.data.data;
        return {
          outcome: 'created',
          booking: { id: b.id, status: b.status, source: b.source, start_at: b.start_at, end_at: b.end_at, guest: b.guest, meeting: b.meeting },
        };
      }
      return { outcome: 'refused', error: answerError(res) };
    },
  };
}
