import net from 'node:net';
import { DEFAULT_TEST_AMQP_URL, DEFAULT_TEST_DATABASE_URL } from './test-env';

export type Resource = 'postgres' | 'rabbitmq';

/** Where one shared test server comes from. */
export type InfraSource =
  | { kind: 'env'; url: string }
  | { kind: 'local'; url: string }
  | { kind: 'container' }
  | { kind: 'missing' };

export interface InfraProbes {
  /** Does something accept TCP connections at this URL's host and port? */
  answers(url: string): Promise<boolean>;
  dockerAvailable(): Promise<boolean>;
}

const RESOURCES: Record<Resource, { envVar: string; defaultUrl: string }> = {
  postgres: { envVar: 'TEST_DATABASE_URL', defaultUrl: DEFAULT_TEST_DATABASE_URL },
  rabbitmq: { envVar: 'TEST_AMQP_URL', defaultUrl: DEFAULT_TEST_AMQP_URL },
};

/**
 * Decides, per server, in this order: an explicit URL in the environment, then the
 * default local server if it answers, then a container if Docker is there. Probes run
 * lazily so a developer with local servers never waits on a Docker check.
 */
export async function planTestInfra(env: Record<string, string | undefined>, probes: InfraProbes): Promise<Record<Resource, InfraSource>> {
  let docker: Promise<boolean> | undefined;
  const decide = async (resource: Resource): Promise<InfraSource> => {
    const { envVar, defaultUrl } = RESOURCES[resource];
    const fromEnv = env[envVar];
    if (fromEnv) return { kind: 'env', url: fromEnv };
    if (await probes.answers(defaultUrl)) return { kind: 'local', url: defaultUrl };
    docker ??= probes.dockerAvailable();
    return (await docker) ? { kind: 'container' } : { kind: 'missing' };
  };
  const [postgres, rabbitmq] = await Promise.all([decide('postgres'), decide('rabbitmq')]);
  return { postgres, rabbitmq };
}

/** The message a developer sees when neither a server nor Docker is around. */
export function missingInfraMessage(plan: Record<Resource, InfraSource>): string | undefined {
  const missing = (Object.keys(plan) as Resource[]).filter((r) => plan[r].kind === 'missing');
  if (missing.length === 0) return undefined;
  const lines = missing.map((r) => `  - ${r}: nothing answers at ${new URL(RESOURCES[r].defaultUrl).host} and ${RESOURCES[r].envVar} is not set`);
  return [
    'Integration tests need PostgreSQL (15+, with btree_gist) and RabbitMQ (3.x), and Docker is not available to start them:',
    ...lines,
    'Start them locally (e.g. `docker compose up -d` on a machine with Docker, or your OS packages),',
    'or point TEST_DATABASE_URL (superuser URL) and TEST_AMQP_URL at running servers.',
  ].join('\n');
}

export function tcpAnswers(url: string, timeoutMs = 500): Promise<boolean> {
  const u = new URL(url);
  const port = Number(u.port || (u.protocol.startsWith('amqp') ? 5672 : 5432));
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Loaded lazily: testcontainers is heavy and only matters when no server answers. */
export async function dockerAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}
