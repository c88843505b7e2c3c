import { SEALING_SERVICES, type Scope } from '@sched/contracts';

export type Upstream = 'booking' | 'availability' | 'invitation' | 'calendar-sync' | 'webhook-dispatch';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteDef<S = Scope | null> {
  pattern: string;
  methods: Partial<Record<Method, S>>;
  upstream: Upstream;
}

/** Every public v1 path (api-v1.md Endpoints), the scope each method needs (decisions.md §3) and its owner. */
export const V1_ROUTES: RouteDef<Scope>[] = [
  { pattern: '/v1/booking-invitations', methods: { GET: 'booking_invitations:read', POST: 'booking_invitations:write' }, upstream: 'invitation' },
  { pattern: '/v1/booking-invitations/:id', methods: { GET: 'booking_invitations:read' }, upstream: 'invitation' },
  { pattern: '/v1/booking-invitations/:id/revoke', methods: { POST: 'booking_invitations:write' }, upstream: 'invitation' },
  { pattern: '/v1/booking-invitations/:id/reissue', methods: { POST: 'booking_invitations:write' }, upstream: 'invitation' },
  { pattern: '/v1/bookings', methods: { GET: 'bookings:read', POST: 'bookings:write' }, upstream: 'booking' },
  { pattern: '/v1/bookings/:id', methods: { GET: 'bookings:read' }, upstream: 'booking' },
  { pattern: '/v1/bookings/:id/cancel', methods: { POST: 'bookings:write' }, upstream: 'booking' },
  { pattern: '/v1/bookings/:id/reschedule', methods: { POST: 'bookings:write' }, upstream: 'booking' },
  { pattern: '/v1/event-types', methods: { GET: 'event_types:read' }, upstream: 'availability' },
  { pattern: '/v1/event-types/:id', methods: { GET: 'event_types:read' }, upstream: 'availability' },
  { pattern: '/v1/event-types/:id/slots', methods: { GET: 'slots:read' }, upstream: 'availability' },
];

/** Workspace admin paths the gateway forwards to the service that owns them (decisions.md §13). */
export const ADMIN_FORWARDED_ROUTES: RouteDef<null>[] = [
  { pattern: '/admin/v1/workspaces/:ws/hosts', methods: { GET: null, POST: null }, upstream: 'availability' },
  { pattern: '/admin/v1/workspaces/:ws/hosts/:host', methods: { GET: null, PATCH: null }, upstream: 'availability' },
  { pattern: '/admin/v1/workspaces/:ws/hosts/:host/schedule', methods: { GET: null, PUT: null }, upstream: 'availability' },
  { pattern: '/admin/v1/workspaces/:ws/hosts/:host/calendar', methods: { GET: null, PUT: null, DELETE: null }, upstream: 'calendar-sync' },
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
