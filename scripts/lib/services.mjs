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
 * The services with background work (consumers, outbox relays, calendar writes, webhook deliveries,
 * retention): `npm start` runs each as two processes (PROCESS_ROLE, README "Environment variables"),
 * `<svc>` with PROCESS_ROLE=api at the normal CPU priority on its usual port, and `<svc>-worker` with
 * PROCESS_ROLE=worker at BACKGROUND_CPU_NICE on its worker port (health, readiness and metrics only).
 * The background work may lag during a burst and catch up; it may not take the API's latency with it.
 * The calendar provider (Radicale) runs at the same lower priority. The gateway is all API: one process.
 * tests-e2e/support/system.ts does the same (keep the two alike), so the benchmarks measure the system
 * as `npm start` runs it.
 */
export const WORKER_SERVICES = ['availability', 'booking', 'invitation', 'calendar-sync', 'webhook-dispatch'];

/**
 * Node's flags for a service process (`npm start`, tests-e2e/support/system.ts, the container image's CMD):
 * none. In particular not `--enable-source-maps`: with it, Node 20 parses the bundle's whole source map
 * again for every stack trace it formats (11 ms of CPU with our bundles, measured; undici and node's
 * streams read `err.stack` whenever a connection closes with an error), stalling the event loop under
 * load. The maps are written beside the bundles (`dist/main.js.map`); `node scripts/map-stack.mjs`
 * maps a logged stack to the TypeScript sources (docs/operations.md, "Stack traces").
 */
export const SERVICE_NODE_ARGS = [];

/** A worker's port is its service's port + this, unless `<NAME>_WORKER_PORT` says otherwise (booking-worker: 8181). */
export const WORKER_PORT_OFFSET = 100;

/** The workers' nice value: BACKGROUND_CPU_NICE (0..19; 0 runs everything at normal priority), else 15. */
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

/** `booking` → `BOOKING_WORKER_PORT`: the variable that moves a worker off its default port. */
export const workerPortVariable = (name) => `${name.toUpperCase().replace(/-/g, '_')}_WORKER_PORT`;

/** Each worker's port (/healthz, /readyz, /metrics): `<NAME>_WORKER_PORT`, else its service's port + WORKER_PORT_OFFSET. */
export function workerPorts(env = {}, ports = servicePorts(env)) {
  return Object.fromEntries(
    WORKER_SERVICES.map((name) => {
      const raw = env[workerPortVariable(name)];
      const port = raw === undefined || raw === '' ? ports[name] + WORKER_PORT_OFFSET : Number(raw);
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${workerPortVariable(name)} must be a port number, got '${raw}'`);
      return [name, port];
    }),
  );
}

/**
 * The processes `npm start` runs, in start order (each service's worker right after its API, the
 * gateway last): `name` labels its log lines, `service` is the bundle, `role` its PROCESS_ROLE,
 * `port` its PORT (a worker's serves /healthz, /readyz and /metrics only), `cpuNice` the CPU_NICE it is given (a worker's; the others keep the environment's).
 */
export function processPlan(env = {}) {
  const ports = servicePorts(env);
  const workers = workerPorts(env, ports);
  const nice = backgroundCpuNice(env);
  return SERVICES.flatMap((s) =>
    WORKER_SERVICES.includes(s.name)
      ? [
          { name: s.name, service: s.name, role: 'api', port: ports[s.name] },
          { name: `${s.name}-worker`, service: s.name, role: 'worker', port: workers[s.name], cpuNice: nice },
        ]
      : [{ name: s.name, service: s.name, role: 'all', port: ports[s.name] }],
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
