import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { stoppedClosers } from './log-lines';
import { queueConsumerCount } from './test-amqp';
import { waitFor } from './wait-for';

/** The two parts PROCESS_ROLE splits a service into (libs/runtime process-role.ts; `all` runs both). */
export type SplitRole = 'api' | 'worker';

/** A log stream for a service's logger, and the chunks it wrote (read them with logEntries / stoppedClosers). */
export function captureLogs(): { stream: PassThrough; logs: string[] } {
  const logs: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => logs.push(c.toString()));
  return { stream, logs };
}

/** The loopback base URL of a listening server (a service started on PORT 0). */
export function loopbackUrl(server: { address(): AddressInfo | string | null }): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * One process of a service as a test started it: a @sched/runtime RunningService (only what the check
 * uses, so this lib needs no service), its base URL and its captured log output.
 */
export interface RoleProcess {
  url: string;
  logs: readonly string[];
  service: { broker: { waitForConnection(): Promise<void> }; stop(reason?: string): Promise<void> };
}

/** What differs per service in expectProcessRolesSplit. */
export interface ProcessRolesSplit<P extends RoleProcess> {
  /** Starts the service with PROCESS_ROLE `role` on the test's database and broker, its log output captured. */
  start(role: SplitRole): Promise<P>;
  amqpUrl: string;
  /** The service's own queue (prefixed name): one consumer on it, the worker's. */
  queue: string;
  /** The status one API route answers at a process's base URL (sent with its caller's credential). */
  apiStatus(url: string): Promise<number>;
  /** Closer names of the background work (the `stopped` log lines): the worker stops them all, the api none. */
  background: readonly string[];
  /** Closer names only the api process runs (its clients, caches): the worker stops none of them. */
  apiOnly?: readonly string[];
  /** Closer names both processes run. */
  inBoth?: readonly string[];
  /** The service's own checks while both processes run. */
  whileRunning?(api: P, worker: P): Promise<void>;
}

/**
 * The PROCESS_ROLE split of one service, checked on two real processes sharing one database and broker
 * (as `npm start` runs them): one consumer on the service's queue, the worker's; the API route answers 200
 * on the api and 404 on the worker, whose port still serves /healthz, /readyz and /metrics; after both
 * stop, what each stopped (its lifecycle's closers) is what it started: the background work in the worker
 * only, `apiOnly` in the api only, `inBoth` in both.
 */
export async function expectProcessRolesSplit<P extends RoleProcess>(split: ProcessRolesSplit<P>): Promise<void> {
  const started: P[] = [];
  const startAs = async (role: SplitRole) => {
    const p = await split.start(role);
    started.push(p);
    return p;
  };
  let api: P;
  let worker: P;
  try {
    api = await startAs('api');
    worker = await startAs('worker');
    await api.service.broker.waitForConnection();
    await waitFor(async () => (await queueConsumerCount(split.amqpUrl, split.queue)) > 0, { timeoutMs: 15000 });
    expect({ queue: split.queue, consumers: await queueConsumerCount(split.amqpUrl, split.queue) }).toEqual({ queue: split.queue, consumers: 1 });
    expect(await split.apiStatus(api.url)).toBe(200);
    expect(await split.apiStatus(worker.url)).toBe(404);
    for (const path of ['/healthz', '/readyz', '/metrics']) expect([path, (await fetch(`${worker.url}${path}`)).status]).toEqual([path, 200]);
    await split.whileRunning?.(api, worker);
  } finally {
    for (const p of started) await p.service.stop('test done');
  }
  const apiStopped = stoppedClosers(api.logs);
  const workerStopped = stoppedClosers(worker.logs);
  const among = (names: readonly string[]) => (c: string) => names.includes(c);
  expect(apiStopped.filter(among(split.background))).toEqual([]);
  expect(workerStopped).toEqual(expect.arrayContaining([...split.background]));
  const apiOnly = split.apiOnly ?? [];
  expect(apiStopped).toEqual(expect.arrayContaining([...apiOnly]));
  expect(workerStopped.filter(among(apiOnly))).toEqual([]);
  for (const stopped of [apiStopped, workerStopped]) expect(stopped).toEqual(expect.arrayContaining([...(split.inBoth ?? [])]));
}
