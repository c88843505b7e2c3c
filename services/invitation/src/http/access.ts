import { apiKeyWith, calledBy, OPERATOR_ONLY, type AccessTable } from '@sched/http';

const PUBLIC_PAGE = '/internal/v1/workspaces/:ws/page/event-types/:slug';
const visitors = calledBy(['gateway'], ['booking_page']);

/** Who may call each route of invitation (docs/security.md, "Who may call what"). */
export const INVITATION_ACCESS: AccessTable = {
  'POST /v1/booking-invitations': apiKeyWith('booking_invitations:write'),
  'GET /v1/booking-invitations': apiKeyWith('booking_invitations:read'),
  'GET /v1/booking-invitations/:id': apiKeyWith('booking_invitations:read'),
  'POST /v1/booking-invitations/:id/revoke': apiKeyWith('booking_invitations:write'),
  'POST /v1/booking-invitations/:id/reissue': apiKeyWith('booking_invitations:write'),
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
