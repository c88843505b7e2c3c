import type { StartedTestContainer } from 'testcontainers';
import { dockerAvailable, missingInfraMessage, planTestInfra, tcpAnswers } from './test-infra';
import { startPostgresContainer, startRabbitContainer } from './test-containers';

/** Shared with global-teardown.ts: Jest runs both in the same parent process. */
export const CONTAINERS_KEY = '__schedTestContainers';
type WithContainers = typeof globalThis & { [CONTAINERS_KEY]?: StartedTestContainer[] };

/**
 * Jest globalSetup: finds or starts Postgres and RabbitMQ once per run and hands their
 * URLs to the workers through TEST_DATABASE_URL and TEST_AMQP_URL (workers inherit the
 * parent's environment). Each test file then makes its own database and prefix.
 */
export default async function globalSetup(): Promise<void> {
  const plan = await planTestInfra(process.env, { answers: (url) => tcpAnswers(url), dockerAvailable });
  const missing = missingInfraMessage(plan);
  if (missing) throw new Error(missing);

  const started: StartedTestContainer[] = [];
  (globalThis as WithContainers)[CONTAINERS_KEY] = started;
  const [pg, amqp] = await Promise.all([
    plan.postgres.kind === 'container' ? startPostgresContainer() : undefined,
    plan.rabbitmq.kind === 'container' ? startRabbitContainer() : undefined,
  ]);
  for (const c of [pg, amqp]) if (c) started.push(c.container);

  process.env.TEST_DATABASE_URL = pg?.url ?? urlOf(plan.postgres);
  process.env.TEST_AMQP_URL = amqp?.url ?? urlOf(plan.rabbitmq);
}

function urlOf(source: { kind: string; url?: string }): string {
  if (!source.url) throw new Error(`no URL for test server source "${source.kind}"`);
  return source.url;
}
