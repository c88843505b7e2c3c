import { z } from 'zod';
import { emailSchema } from '../email';
import { idSchema } from '../ids';
import { metadataSchema } from '../metadata';
import { timestampSchema } from '../time';
import { invitationStatusSchema } from './values';

const invitationFields = {
  id: idSchema('biv'),
  event_type_id: idSchema('evt'),
  email: emailSchema.nullable(),
  not_before: timestampSchema.nullable(),
  expires_at: timestampSchema,
  max_uses: z.number().int(),
  used_count: z.number().int(),
  status: invitationStatusSchema,
  metadata: metadataSchema,
  created_at: timestampSchema,
  updated_at: timestampSchema,
  revoked_at: timestampSchema.nullable(),
};

/** Booking Invitation as read, listed and revoked: never with invitation_url. */
export const bookingInvitationSchema = z
  .strictObject(invitationFields)
  .meta({ id: 'BookingInvitation', description: 'Access to an invitation-only Event Type through the hosted booking page.' });

/** As returned by create and reissue only: invitation_url carries a one-time credential. */
export const bookingInvitationWithUrlSchema = z
  .strictObject({
    ...invitationFields,
    invitation_url: z.string().meta({ format: 'uri', description: '{booking_page_url}/i/<one-time credential>; returned only here.' }),
  })
  .meta({ id: 'BookingInvitationWithUrl', description: 'A Booking Invitation with its invitation_url (create and reissue only).' });

export type BookingInvitation = z.infer<typeof bookingInvitationSchema>;
export type BookingInvitationWithUrl = z.infer<typeof bookingInvitationWithUrlSchema>;
