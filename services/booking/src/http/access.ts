import { apiKeyWith, calledBy, type AccessTable } from '@sched/http';

/** Who may call each route of booking (docs/security.md, "Who may call what"). */
export const BOOKING_ACCESS: AccessTable = {
  'POST /v1/bookings': apiKeyWith('bookings:write'),
  'GET /v1/bookings': apiKeyWith('bookings:read'),
  'GET /v1/bookings/:booking': apiKeyWith('bookings:read'),
  'POST /v1/bookings/:booking/reschedule': apiKeyWith('bookings:write'),
  'POST /v1/bookings/:booking/cancel': apiKeyWith('bookings:write'),
  // The booking page's create: only the invitation service, for a visitor, and (checked by the route)
  // only for the invitation the invitation service resolved for that visitor.
  'POST /internal/v1/workspaces/:ws/bookings': calledBy(['invitation'], ['booking_page']),
};
