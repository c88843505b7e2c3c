import { OPERATOR_ONLY, type AccessTable } from '@sched/http';

const ENDPOINTS = '/admin/v1/workspaces/:ws/webhook-endpoints';

/**
 * Who may call each route of webhook-dispatch (docs/security.md, "Who may call what"): all of them are
 * operator routes, which only the gateway forwards; no other service may (calendar-sync may not create
 * a webhook endpoint, booking may not replay a dead letter).
 */
export const WEBHOOK_DISPATCH_ACCESS: AccessTable = {
  [`POST ${ENDPOINTS}`]: OPERATOR_ONLY,
  [`GET ${ENDPOINTS}`]: OPERATOR_ONLY,
  [`GET ${ENDPOINTS}/:whe`]: OPERATOR_ONLY,
  [`PATCH ${ENDPOINTS}/:whe`]: OPERATOR_ONLY,
  [`DELETE ${ENDPOINTS}/:whe`]: OPERATOR_ONLY,
  [`POST ${ENDPOINTS}/:whe/rotate-secret`]: OPERATOR_ONLY,
  'GET /admin/v1/workspaces/:ws/webhook-deliveries': OPERATOR_ONLY,
  'POST /admin/v1/workspaces/:ws/webhook-deliveries/replay': OPERATOR_ONLY,
  'POST /admin/v1/webhook-deliveries/:id/replay': OPERATOR_ONLY,
  'GET /admin/v1/dead-letters': OPERATOR_ONLY,
  'POST /admin/v1/dead-letters/:queue/replay': OPERATOR_ONLY,
  'GET /admin/v1/secrets/webhook-dispatch': OPERATOR_ONLY,
  'POST /admin/v1/secrets/webhook-dispatch/rotate': OPERATOR_ONLY,
};
