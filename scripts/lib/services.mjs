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

/**
 * The background services: their work (calendar writes, webhooks) may lag during a burst and catch up,
 * it may not take the API's latency with it. `npm start` runs them, and the calendar provider (Radicale),
 * at a lower CPU priority (CPU_NICE, README "Environment variables"); tests-e2e/support/system.ts does
 * the same, so the benchmarks measure the system as `npm start` runs it.
 */
export const BACKGROUND_SERVICES = ['calendar-sync', 'webhook-dispatch'];

/** The background services' nice value: BACKGROUND_CPU_NICE (0..19; 0 runs everything at normal priority), else 15. */
export function backgroundCpuNice(env = {}) {
  const raw = env.BACKGROUND_CPU_NICE;
  if (raw === undefined || raw === '') return 15;
  const nice = Number(raw);
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new Error(`BACKGROUND_CPU_NICE must be an integer from 0 (normal priority) to 19 (the lowest), got '${raw}'`);
  return nice;
}

/** `calendar-sync` → `CALENDAR_SYNC_PORT`: the variable that moves a service off its default port. */
export const portVariable = (name) => `${name.toUpperCase().replace(/-/g, '_')}_PORT`;

/** Each service's port: its default, or `<NAME>_PORT` from the environment (e.g. GATEWAY_PORT=9080). */
export function servicePorts(env = {}) {
  return Object.fromEntries(
    SERVICES.map((s) => {
      const raw = env[portVariable(s.name)];
      const port = raw === undefined || raw === '' ? s.port : Number(raw);
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${portVariable(s.name)} must be a port number, got '${raw}'`);
      return [s.name, port];
    }),
  );
}

/**
 * The gateway's operations port (/readyz, /metrics; its public port answers neither):
 * GATEWAY_OPS_PORT, else the gateway's port + 1000 (9080), as the gateway's own OPS_PORT default.
 */
export function gatewayOpsPort(env = {}, ports = servicePorts(env)) {
  const raw = env.GATEWAY_OPS_PORT;
  const derived = raw === undefined || raw === '';
  const port = derived ? ports.gateway + 1000 : Number(raw);
  if (Number.isInteger(port) && port >= 1 && port <= 65535) return port;
  throw new Error(derived ? `the gateway's port + 1000 (${port}) is not a port: set GATEWAY_OPS_PORT` : `GATEWAY_OPS_PORT must be a port number, got '${raw}'`);
}

/** Environment each service reads to find the others (all on loopback here). */
export function upstreamEnv(ports = servicePorts()) {
  return {
    BOOKING_URL: `http://127.0.0.1:${ports.booking}`,
    AVAILABILITY_URL: `http://127.0.0.1:${ports.availability}`,
    INVITATION_URL: `http://127.0.0.1:${ports.invitation}`,
    CALENDAR_SYNC_URL: `http://127.0.0.1:${ports['calendar-sync']}`,
    WEBHOOK_DISPATCH_URL: `http://127.0.0.1:${ports['webhook-dispatch']}`,
  };
}
