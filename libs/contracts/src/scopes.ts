import { z } from 'zod';

/** API key scopes (decisions.md §3). */
export const SCOPES = [
  'event_types:read',
  'slots:read',
  'bookings:read',
  'bookings:write',
  'booking_invitations:read',
  'booking_invitations:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const scopeSchema = z.enum(SCOPES).meta({ id: 'Scope', description: 'API key scope.' });

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}
