import type { StartedTestContainer } from 'testcontainers';

/**
 * Fallback for machines with Docker but no local servers. Trust auth in the Postgres
 * container matches the local setup: service roles log in without passwords.
 */
export async function startPostgresContainer(): Promise<{ url: string; container: StartedTestContainer }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('postgres:15-alpine')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    // The entrypoint starts Postgres twice (init, then for real); the second "ready" is the one that counts.
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  return { url: `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`, container };
}

/** The official image allows guest from outside loopback, so the default credentials work. */
export async function startRabbitContainer(): Promise<{ url: string; container: StartedTestContainer }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('rabbitmq:3.13-alpine')
    .withExposedPorts(5672)
    .withWaitStrategy(Wait.forLogMessage('Server startup complete'))
    .withStartupTimeout(120_000)
    .start();
  return { url: `amqp://guest:guest@${container.getHost()}:${container.getMappedPort(5672)}`, container };
}
