import { SEALING_SERVICES, type Scope, type V1Owner } from '@sched/contracts';

/**
 * The services the gateway forwards to. The public v1 operations are routed from libs/contracts
 * V1_OPERATIONS (each names its owner, v1.routes.ts); the admin paths from the table below.
 */
export type Upstream = V1Owner | 'calendar-sync' | 'webhook-dispatch';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteDef<S = Scope | null> {
  pattern: string;
  methods: Partial<Record<Method, S>>;
  upstream: Upstream;
}

/** Workspace admin paths the gateway forwards to the service that owns them (decisions.md §13). */
export const ADMIN_FORWARDED_ROUTES: RouteDef<null>[] = [
  { pattern: '/admin/v1/workspaces/:ws/hosts', methods: { GET: null, POST: null }, upstream: 'availability' },
  { pattern: '/admin/v1/workspaces/:ws/hosts/:host', methods: { GET: null, PATCH: null }, upstream: 'availability' },
  { pattern: '/admin/v1/workspaces/:ws/hosts/:host/schedule', methods: { GET: null, PUT: null }, upstream: 'availability' },
  { pattern: '/admin/v1/workspaces/:ws/hosts/:host/calendar', methods: { GET: null, PUT: null, DELETE: null }, upstream: 'calendar-sync' },
  { pattern: '/admin/v1/workspaces/:ws/hosts/:host/calendar/oauth', methods: { POST: null }, upstream: 'calendar-sync' },
  { pattern: '/admin/v1/workspaces/:ws/event-types', methods: { GET: null, POST: null }, upstream: 'availability' },
  { pattern: '/admin/v1/workspaces/:ws/event-types/:evt', methods: { GET: null, PATCH: null }, upstream: 'availability' },
  { pattern: '/admin/v1/workspaces/:ws/bookings/:bkg/calendar-resync', methods: { POST: null }, upstream: 'calendar-sync' },
  { pattern: '/admin/v1/workspaces/:ws/webhook-endpoints', methods: { GET: null, POST: null }, upstream: 'webhook-dispatch' },
  { pattern: '/admin/v1/workspaces/:ws/webhook-endpoints/:whe', methods: { GET: null, PATCH: null, DELETE: null }, upstream: 'webhook-dispatch' },
  { pattern: '/admin/v1/workspaces/:ws/webhook-endpoints/:whe/rotate-secret', methods: { POST: null }, upstream: 'webhook-dispatch' },
  { pattern: '/admin/v1/workspaces/:ws/webhook-deliveries', methods: { GET: null }, upstream: 'webhook-dispatch' },
  { pattern: '/admin/v1/workspaces/:ws/webhook-deliveries/replay', methods: { POST: null }, upstream: 'webhook-dispatch' },
  { pattern: '/admin/v1/webhook-deliveries/:id/replay', methods: { POST: null }, upstream: 'webhook-dispatch' },
  { pattern: '/admin/v1/dead-letters', methods: { GET: null }, upstream: 'webhook-dispatch' },
  { pattern: '/admin/v1/dead-letters/:queue/replay', methods: { POST: null }, upstream: 'webhook-dispatch' },
  // Secrets key rotation: each service that seals values re-seals them over its own schema (decisions.md §13).
  ...SEALING_SERVICES.flatMap((upstream): RouteDef<null>[] => [
    { pattern: `/admin/v1/secrets/${upstream}`, methods: { GET: null }, upstream },
    { pattern: `/admin/v1/secrets/${upstream}/rotate`, methods: { POST: null }, upstream },
  ]),
];
