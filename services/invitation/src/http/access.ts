import { calledBy, operationAccess, OPERATOR_ONLY, type AccessTable } from '@sched/http';

const PUBLIC_PAGE = '/internal/v1/workspaces/:ws/page/event-types/:slug';
const visitors = calledBy(['gateway'], ['booking_page']);

/** Who may call each route of invitation (docs/security.md, "Who may call what"). */
export const INVITATION_ACCESS: AccessTable = {
  // The v1 operations it owns, for an API key with the operation's scope (libs/contracts V1_OPERATIONS).
  ...operationAccess('invitation'),
  // The hosted booking page's backend: the gateway, for a visitor.
  'GET /internal/v1/page/invitation': visitors,
  'GET /internal/v1/page/invitation/slots': visitors,
  'POST /internal/v1/page/invitation/bookings': visitors,
  [`GET ${PUBLIC_PAGE}`]: visitors,
  [`GET ${PUBLIC_PAGE}/slots`]: visitors,
  [`POST ${PUBLIC_PAGE}/bookings`]: visitors,
  'GET /admin/v1/secrets/invitation': OPERATOR_ONLY,
  'POST /admin/v1/secrets/invitation/rotate': OPERATOR_ONLY,
};
