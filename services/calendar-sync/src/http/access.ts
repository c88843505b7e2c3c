import { calledBy, OPERATOR_ONLY, type AccessTable } from '@sched/http';

const CALENDAR = '/admin/v1/workspaces/:ws/hosts/:host/calendar';

/** Who may call each route of calendar-sync (docs/security.md, "Who may call what"). */
export const CALENDAR_SYNC_ACCESS: AccessTable = {
  'GET /internal/v1/workspaces/:ws/hosts/:host/busy': calledBy(['availability']),
  // The gateway's public OAuth callback page (it carries the provider's redirect, nothing of its own).
  'POST /internal/v1/oauth/callback': calledBy(['gateway'], ['service']),
  [`PUT ${CALENDAR}`]: OPERATOR_ONLY,
  [`GET ${CALENDAR}`]: OPERATOR_ONLY,
  [`DELETE ${CALENDAR}`]: OPERATOR_ONLY,
  [`POST ${CALENDAR}/oauth`]: OPERATOR_ONLY,
  'POST /admin/v1/workspaces/:ws/bookings/:bkg/calendar-resync': OPERATOR_ONLY,
  'GET /admin/v1/secrets/calendar-sync': OPERATOR_ONLY,
  'POST /admin/v1/secrets/calendar-sync/rotate': OPERATOR_ONLY,
};
