import { z } from 'zod';
import type { ErrorDetail } from '../errors';
import { emailSchema } from '../email';
import { addIssue } from '../issues';
import { metadataSchema } from '../metadata';
import { cursorSchema, limitQuerySchema } from '../pagination';
import { invitationStatusSchema } from '../resources/values';
import { timestampInputSchema } from '../time';
import { referenceIdSchema } from './fields';

export const MAX_USES_MIN = 1;
export const MAX_USES_MAX = 100;

/** Query of GET /v1/booking-invitations. `status` filters on the effective status at query time. */
export const listBookingInvitationsQuerySchema = z
  .strictObject({
    status: invitationStatusSchema.optional(),
    event_type_id: referenceIdSchema('Only invitations of this Event Type.').optional(),
    cursor: cursorSchema.optional(),
    limit: limitQuerySchema.optional(),
  })
  .meta({ id: 'ListBookingInvitationsQuery', description: 'Query parameters of GET /v1/booking-invitations.' });

/**
 * Body of POST /v1/booking-invitations. `expires_at` must be after `not_before` (checked here);
 * that it lies in the future needs a clock and is checked with invitationTimeIssues.
 */
export const createBookingInvitationBodySchema = z
  .strictObject({
    event_type_id: referenceIdSchema('An invitation-only Event Type.'),
    email: emailSchema.nullable().optional().meta({ description: 'Recipient restriction; must equal guest.email (case-insensitive).' }),
    not_before: timestampInputSchema.nullable().optional().meta({ description: 'Activation time.' }),
    expires_at: timestampInputSchema,
    max_uses: z.number().int().min(MAX_USES_MIN).max(MAX_USES_MAX).meta({ description: 'Maximum successful Booking uses, 1 to 100.' }),
    metadata: metadataSchema.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.not_before instanceof Date && b.expires_at instanceof Date && b.expires_at.getTime() <= b.not_before.getTime()) {
      addIssue(ctx, 'out_of_range', 'expires_at must be after not_before.', ['expires_at']);
    }
  })
  .meta({ id: 'CreateBookingInvitationRequest', description: 'Body of POST /v1/booking-invitations.' });

export type ListBookingInvitationsQuery = z.infer<typeof listBookingInvitationsQuerySchema>;
export type CreateBookingInvitationBody = z.infer<typeof createBookingInvitationBodySchema>;

/** decisions.md §9: `expires_at` in the future. Returns the details of a 400, empty when fine. */
export function invitationTimeIssues(body: Pick<CreateBookingInvitationBody, 'expires_at'>, now: Date): ErrorDetail[] {
  return body.expires_at.getTime() > now.getTime() ? [] : [{ field: 'expires_at', issue: 'out_of_range' }];
}
