import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SERVICE_NAMES, type ServiceName } from '@sched/db';
import { cleanupAmqpPrefix, createTestDatabase, freePort, startRadicale, TEST_INTERNAL_AUTH_KEYS, testAmqp, waitFor, type TestDatabase, type TestRadicale } from '@sched/testing';

/**
 * The whole system as separate processes on loopback, started exactly as `npm start` starts it
 * (the esbuild bundles from `pnpm build`; each service with background work as an API process and a
 * worker process, PROCESS_ROLE; the workers and Radicale at a lower CPU priority), but with its own
 * database, AMQP prefix, Radicale and free ports, so several runs never see each other. Replicas,
 * SIGKILL and restarts are for the e2e and resilience suites.
 */
export { freePort };

/**
 * The services with background work, which `npm start` runs as `<svc>` (PROCESS_ROLE api, normal
 * priority) and `<svc>-worker` (PROCESS_ROLE worker, at backgroundCpuNice): as WORKER_SERVICES and
 * backgroundCpuNice in scripts/lib/services.mjs (keep the two alike). The gateway is all API.
 */
/** Node's flags for a service process: none, as scripts/lib/services.mjs SERVICE_NODE_ARGS (no --enable-source-maps: see there). */
export const SERVICE_NODE_ARGS: readonly string[] = [];

export const WORKER_SERVICES: readonly ServiceName[] = ['availability', 'booking', 'invitation', 'calendar-sync', 'webhook-dispatch'];
/** Unsplit, the services run at the background priority (as before PROCESS_ROLE). */
const UNSPLIT_BACKGROUND: readonly ServiceName[] = ['calendar-sync', 'webhook-dispatch'];

/** PROCESS_ROLE of one process (libs/runtime process-role.ts). */
export type ProcessRole = 'all' | 'api' | 'worker';

/** BACKGROUND_CPU_NICE (0..19; 0 runs everything at normal priority), else 15, as `npm start`. */
export function backgroundCpuNice(env: Record<string, string | undefined> = process.env): number {
  const raw = env.BACKGROUND_CPU_NICE;
  if (raw === undefined || raw === '') return 15;
  const nice = Number(raw);
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new Error(`BACKGROUND_CPU_NICE must be an integer from 0 (normal priority) to 19 (the lowest), got '${raw}'`);
  return nice;
}

export const ROOT = path.resolve(__dirname, '../..');

export interface ServiceProcess {
  /** The service (its bundle): a service's CPU is the sum of its processes (tests-e2e/bench/harness.ts). */
  service: ServiceName;
  /** What this process runs: `api` and `worker` for a split service, `all` for the gateway (or split: false). */
  role: ProcessRole;
  /** `<service>` or `<service>-worker`, as `npm start` labels its lines. */
  name: string;
  replica: number;
  port: number;
  url: string;
  /** Where /readyz and /metrics are: the gateway's operations port (its public port answers neither), else `url`. */
  opsUrl: string;
  child: ChildProcess;
  /** JSON log lines seen so far (parsed), for assertions about logs. */
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
}

export interface SystemOptions {
  /** Extra environment for every service (e.g. fast retry schedules). */
  env?: Record<string, string>;
  /** Extra environment per service (both of its processes). */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /**
   * CPU_NICE of the workers and the nice value of Radicale; default backgroundCpuNice()
   * (15, or BACKGROUND_CPU_NICE), as `npm start`. `env` / `serviceEnv` CPU_NICE still win for the services.
   */
  backgroundNice?: number;
  /**
   * Each service with background work as an API and a worker process, as `npm start` (default true);
   * false (or SYSTEM_SPLIT=0): one process per service (PROCESS_ROLE all), as before the split:
   * calendar-sync and webhook-dispatch at the background priority, the others at the normal one.
   */
  split?: boolean;
}

export interface System {
  gatewayUrl: string;
  /** The nice value the workers and Radicale were started with (SystemOptions.backgroundNice). */
  backgroundNice: number;
  /** SystemOptions.split: whether the services with background work run as api + worker. */
  split: boolean;
  adminToken: string;
  db: TestDatabase;
  radicale: TestRadicale;
  amqp: { url: string; prefix: string };
  /** Every process, in start order: a split service's API, then its worker. */
  processes: ServiceProcess[];
  /** The first replica's API process of a service (`all` unsplit): where its routes answer. */
  api(service: ServiceName): ServiceProcess;
  /**
   * Starts one more replica of a service with its own ports: its API and its worker when split.
   * Resolves with the API's process (the worker is in `processes`, same `replica`).
   */
  addReplica(service: ServiceName, env?: Record<string, string>): Promise<ServiceProcess>;
  /** SIGKILL (no clean stop) of every process of a service, or only those of one role (e.g. the calendar writer: 'worker'). */
  kill(service: ServiceName, role?: ProcessRole): Promise<void>;
  /**
   * Starts a service's first replica again after kill(), optionally with other environment (e.g. a new
   * SECRETS_KEYS): each of its processes that is not running (or only `role`'s). Resolves with the API's
   * process when it was restarted, else the restarted one.
   */
  restart(service: ServiceName, env?: Record<string, string>, role?: ProcessRole): Promise<ServiceProcess>;
  /** Every log line of every process, for the "no secret in logs" checks. */
  allLogText(): string;
  stop(): Promise<void>;
}

let built = false;
/** `pnpm build` once per test process: the bundles are what npm start and the image run. */
export function buildOnce(): void {
  if (built) return;
  const r = spawnSync('node', ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pnpm build failed:\n${r.stderr}`);
  built = true;
}

/** Each service's queue, its DLQ and its delay queues for the default and the configured retry schedules. */
function leftoverQueueNames(): string[] {
  const delays = [1000, 5000, 30000, 2000, 10000, 60000];
  return SERVICE_NAMES.flatMap((s) => [s, `${s}.dlq`, ...delays.map((d) => `${s}.retry.${d}ms`)]);
}

export async function startSystem(opts: SystemOptions = {}): Promise<System> {
  buildOnce();
  const backgroundNice = opts.backgroundNice ?? backgroundCpuNice();
  // SYSTEM_SPLIT=0: every service in one process (PROCESS_ROLE all), to measure what the split changes.
  const split = opts.split ?? process.env.SYSTEM_SPLIT !== '0';
  /** The roles a service runs as, in start order. */
  const rolesOf = (service: ServiceName): ProcessRole[] => (split && WORKER_SERVICES.includes(service) ? ['api', 'worker'] : ['all']);
  const db = await createTestDatabase({ services: [...SERVICE_NAMES] });
  const radicale = await startRadicale({ users: { demo: 'demo-password' }, nice: backgroundNice });
  const amqp = testAmqp();
  const adminToken = randomBytes(24).toString('base64url');
  const secrets = {
    ADMIN_TOKEN: adminToken,
    SECRETS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    CURSOR_SECRET: randomBytes(24).toString('base64url'),
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
  };
  const ports = Object.fromEntries(await Promise.all(SERVICE_NAMES.map(async (s) => [s, await freePort()] as const))) as Record<ServiceName, number>;
  const urls = {
    BOOKING_URL: `http://127.0.0.1:${ports.booking}`,
    AVAILABILITY_URL: `http://127.0.0.1:${ports.availability}`,
    INVITATION_URL: `http://127.0.0.1:${ports.invitation}`,
    CALENDAR_SYNC_URL: `http://127.0.0.1:${ports['calendar-sync']}`,
    WEBHOOK_DISPATCH_URL: `http://127.0.0.1:${ports['webhook-dispatch']}`,
  };
  const processes: ServiceProcess[] = [];

  const spawnService = async (service: ServiceName, replica: number, port: number, role: ProcessRole, extra: Record<string, string> = {}): Promise<ServiceProcess> => {
    const name = role === 'worker' ? `${service}-worker` : service;
    // SYSTEM_PROFILE_DIR (benchmarks): each process writes a CPU profile to <dir>/<service>/ (a worker's to <dir>/<service>-worker/) on exit.
    const profile = process.env.SYSTEM_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.join(process.env.SYSTEM_PROFILE_DIR, name)}`] : [];
    const opsPort = service === 'gateway' ? await freePort() : port;
    const child = spawn(process.execPath, [...profile, ...SERVICE_NODE_ARGS, path.join(ROOT, 'services', service, 'dist/main.js')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: db.urlFor(service),
        AMQP_URL: amqp.url,
        AMQP_PREFIX: amqp.prefix,
        BOOKING_PAGE_URL: `http://127.0.0.1:${ports.gateway}/book`,
        // The gateway's public OAuth callback: the redirect URI calendar-sync sends to Google / Microsoft
        // (only used when their OAuth clients are configured, e.g. against the fakes of @sched/testing).
        OAUTH_REDIRECT_URL: `http://127.0.0.1:${ports.gateway}/oauth/callback`,
        // One bundle per service; the role is a setting.
        PROCESS_ROLE: role,
        // Unsplit (SYSTEM_SPLIT=0), the layout before PROCESS_ROLE: the calendar writer and the webhook sender,
        // whole services, at the background priority.
        ...(role === 'worker' || (!split && UNSPLIT_BACKGROUND.includes(service)) ? { CPU_NICE: String(backgroundNice) } : {}),
        ...secrets,
        ...urls,
        ...opts.env,
        ...opts.serviceEnv?.[service],
        ...(service === 'gateway' ? { OPS_PORT: String(opsPort) } : {}),
        ...extra,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Record<string, unknown>[] = [];
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (l) => {
        try {
          lines.push(JSON.parse(l) as Record<string, unknown>);
        } catch {
          lines.push({ raw: l });
        }
      });
    }
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const proc: ServiceProcess = { service, role, name, replica, port, url: `http://127.0.0.1:${port}`, opsUrl: `http://127.0.0.1:${opsPort}`, child, lines, exited };
    processes.push(proc);
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${JSON.stringify(lines.slice(-5))}`);
        const res = await fetch(`${proc.opsUrl}/readyz`).catch(() => null);
        return res?.ok ?? false;
      },
      { timeoutMs: 30000, intervalMs: 100 },
    );
    return proc;
  };

  /** A replica of a service: each of its roles (the API on `apiPort`, a worker on a free port). Resolves with the first. */
  const spawnReplica = async (service: ServiceName, replica: number, apiPort: number, env?: Record<string, string>, only?: ProcessRole): Promise<ServiceProcess> => {
    const started: ServiceProcess[] = [];
    for (const role of rolesOf(service)) {
      if (only && role !== only) continue;
      started.push(await spawnService(service, replica, role === 'worker' ? await freePort() : apiPort, role, env));
    }
    if (started.length === 0) throw new Error(`${service} has no ${only} process (${split ? 'split' : 'one process per service'})`);
    return started[0]!;
  };

  // A run that ends without stop() (an uncaught error, process.exit) must not leave the system running on
  // the machine: its processes would keep using the cores of every later run.
  const killOnExit = () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    const radicalePid = radicale.pid();
    try {
      if (radicalePid !== undefined) process.kill(radicalePid, 'SIGKILL');
    } catch {
      // Ended meanwhile.
    }
  };
  process.once('exit', killOnExit);

  try {
    // Services first (each API, then its worker), the gateway last, as npm start does.
    for (const s of SERVICE_NAMES.filter((n) => n !== 'gateway')) await spawnReplica(s, 1, ports[s]);
    await spawnReplica('gateway', 1, ports.gateway);
  } catch (err) {
    processes.forEach((p) => p.child.kill('SIGKILL'));
    await radicale.close();
    await db.drop();
    throw err;
  }

  const system: System = {
    gatewayUrl: `http://127.0.0.1:${ports.gateway}`,
    backgroundNice,
    split,
    adminToken,
    db,
    radicale,
    amqp,
    processes,
    api: (service) => processes.find((p) => p.service === service && p.replica === 1 && p.role !== 'worker')!,
    addReplica: async (service, env) => spawnReplica(service, Math.max(0, ...processes.filter((p) => p.service === service).map((p) => p.replica)) + 1, await freePort(), env),
    kill: async (service, role) => {
      const victims = processes.filter((p) => p.service === service && (!role || p.role === role) && p.child.exitCode === null && p.child.signalCode === null);
      victims.forEach((p) => p.child.kill('SIGKILL'));
      await Promise.all(victims.map((p) => p.exited));
    },
    restart: async (service, env, role) => {
      const running = (r: ProcessRole) => processes.some((p) => p.service === service && p.replica === 1 && p.role === r && p.child.exitCode === null && p.child.signalCode === null);
      const down = rolesOf(service).filter((r) => (!role || r === role) && !running(r));
      if (down.length === 0) throw new Error(`restart(${service}${role ? `, ${role}` : ''}): nothing of it is down (kill it first)`);
      const started: ServiceProcess[] = [];
      for (const r of down) started.push(await spawnService(service, 1, r === 'worker' ? await freePort() : ports[service], r, env));
      return started[0]!;
    },
    allLogText: () => processes.map((p) => p.lines.map((l) => JSON.stringify(l)).join('\n')).join('\n'),
    stop: async () => {
      process.off('exit', killOnExit);
      const alive = processes.filter((p) => p.child.exitCode === null);
      alive.forEach((p) => p.child.kill('SIGTERM'));
      const timer = setTimeout(() => alive.forEach((p) => p.child.kill('SIGKILL')), 15000);
      await Promise.all(alive.map((p) => p.exited));
      clearTimeout(timer);
      await radicale.close();
      await db.drop();
      // Best effort: quorum queues left behind keep costing the shared broker CPU in every later run.
      await cleanupAmqpPrefix(amqp.url, amqp.prefix, leftoverQueueNames(), ['scheduling.events', 'scheduling.dlx']).catch(() => undefined);
    },
  };
  return system;
}
