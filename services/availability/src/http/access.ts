import { calledBy, operationAccess, OPERATOR_ONLY, type AccessTable } from '@sched/http';

const ADMIN = '/admin/v1/workspaces/:ws';

/** Who may call each route of availability (docs/security.md, "Who may call what"). */
export const AVAILABILITY_ACCESS: AccessTable = {
  // The v1 operations it owns, for an API key with the operation's scope (libs/contracts V1_OPERATIONS);
  // Slots also for the invitation service, for the booking page's visitors.
  ...operationAccess('availability', { listSlots: { callers: ['gateway', 'invitation'], principals: ['api_key', 'booking_page'] } }),
  'POST /internal/v1/workspaces/:ws/slot-check': calledBy(['booking'], ['api_key', 'booking_page']),
  // Several checks of one workspace and one principal (the credential's): booking batches only those.
  'POST /internal/v1/workspaces/:ws/slot-checks': calledBy(['booking'], ['api_key', 'booking_page']),
  'GET /internal/v1/workspaces/:ws/hosts/:host': calledBy(['calendar-sync']),
  'GET /internal/v1/workspaces/:ws/event-types/by-slug/:slug': calledBy(['invitation'], ['booking_page']),
  'GET /internal/v1/workspaces/:ws/event-types/:evt': calledBy(['invitation'], ['api_key', 'booking_page']),
  [`POST ${ADMIN}/hosts`]: OPERATOR_ONLY,
  [`GET ${ADMIN}/hosts`]: OPERATOR_ONLY,
  [`GET ${ADMIN}/hosts/:host`]: OPERATOR_ONLY,
  [`PATCH ${ADMIN}/hosts/:host`]: OPERATOR_ONLY,
  [`GET ${ADMIN}/hosts/:host/schedule`]: OPERATOR_ONLY,
  [`PUT ${ADMIN}/hosts/:host/schedule`]: OPERATOR_ONLY,
  [`POST ${ADMIN}/event-types`]: OPERATOR_ONLY,
  [`GET ${ADMIN}/event-types`]: OPERATOR_ONLY,
  [`GET ${ADMIN}/event-types/:evt`]: OPERATOR_ONLY,
  [`PATCH ${ADMIN}/event-types/:evt`]: OPERATOR_ONLY,
};
