import { z } from 'zod';

/** Kinds of webhook event of api-v1.md; receivers may subscribe to these. */
export const PUBLIC_EVENT_KINDS = ['booking.created', 'booking.rescheduled', 'booking.cancelled', 'calendar.created', 'calendar.failed'] as const;
export type PublicEventKind = (typeof PUBLIC_EVENT_KINDS)[number];

/**
 * Service-to-service results that never reach a webhook: calendar-sync reports what the provider
 * did, and booking turns it into the Booking change plus the public calendar.* event.
 */
export const INTERNAL_EVENT_KINDS = ['calendar.synced', 'calendar.sync_failed', 'calendar.connection_updated'] as const;
export type InternalEventKind = (typeof INTERNAL_EVENT_KINDS)[number];

export const EVENT_KINDS = [...PUBLIC_EVENT_KINDS, ...INTERNAL_EVENT_KINDS] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const publicEventKindSchema = z.enum(PUBLIC_EVENT_KINDS).meta({ id: 'WebhookEventKind', description: 'Kind of webhook event.' });

export function isPublicEventKind(value: unknown): value is PublicEventKind {
  return typeof value === 'string' && (PUBLIC_EVENT_KINDS as readonly string[]).includes(value);
}
