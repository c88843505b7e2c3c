import { calledBy, operationAccess, type AccessTable } from '@sched/http';

/** Who may call each route of booking (docs/security.md, "Who may call what"). */
export const BOOKING_ACCESS: AccessTable = {
  // The v1 operations it owns, for an API key with the operation's scope (libs/contracts V1_OPERATIONS).
  ...operationAccess('booking'),
  // The booking page's create: only the invitation service, for a visitor, and (checked by the route)
  // only for the invitation the invitation service resolved for that visitor.
  'POST /internal/v1/workspaces/:ws/bookings': calledBy(['invitation'], ['booking_page']),
};
