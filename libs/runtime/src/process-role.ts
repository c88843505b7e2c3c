/**
 * What one process of a service runs (PROCESS_ROLE, serviceEnv in @sched/config):
 * - `all`: the HTTP API and the background work, in one process (the default);
 * - `api`: the HTTP API and what answering needs: routes, in-process caches and the LISTEN that keeps
 *   them in step, the copies an answer is served from;
 * - `worker`: the background work: consumers, outbox relays, retention jobs, delivery workers,
 *   schedulers that serve no answer. Its port serves /healthz, /readyz and /metrics only.
 */
export type ProcessRole = 'all' | 'api' | 'worker';

/** The parts a service's setup starts in this process (`ctx.runs`): `if (ctx.runs.api) { …routes… }`. */
export interface ProcessParts {
  readonly role: ProcessRole;
  /** Register the routes and what answering needs. */
  readonly api: boolean;
  /** Start the consumers, relays, jobs and workers. */
  readonly background: boolean;
}

const ROLES: readonly ProcessRole[] = ['all', 'api', 'worker'];

/**
 * The parts of a role. `undefined` is `all` (a config without PROCESS_ROLE); anything else that is not
 * a role throws, naming the setting: config parsing refuses it first, this guards hand-made configs.
 */
export function processParts(role: ProcessRole | undefined = 'all'): ProcessParts {
  if (!ROLES.includes(role)) throw new Error(`PROCESS_ROLE must be one of ${ROLES.join(', ')}, got '${String(role)}'`);
  return Object.freeze({ role, api: role !== 'worker', background: role !== 'api' });
}
