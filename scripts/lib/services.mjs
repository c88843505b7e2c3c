// The six services, their default ports and start order (shared by start, e2e and resilience runners).
export const SERVICES = [
  { name: 'availability', port: 8082 },
  { name: 'booking', port: 8081 },
  { name: 'invitation', port: 8083 },
  { name: 'calendar-sync', port: 8084 },
  { name: 'webhook-dispatch', port: 8085 },
  { name: 'gateway', port: 8080 },
];

export const RADICALE_PORT = 5232;

/** Environment each service reads to find the others (all on loopback here). */
export function upstreamEnv(ports = Object.fromEntries(SERVICES.map((s) => [s.name, s.port]))) {
  return {
    BOOKING_URL: `http://127.0.0.1:${ports.booking}`,
    AVAILABILITY_URL: `http://127.0.0.1:${ports.availability}`,
    INVITATION_URL: `http://127.0.0.1:${ports.invitation}`,
    CALENDAR_SYNC_URL: `http://127.0.0.1:${ports['calendar-sync']}`,
    WEBHOOK_DISPATCH_URL: `http://127.0.0.1:${ports['webhook-dispatch']}`,
  };
}
