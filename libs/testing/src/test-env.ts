/** Where the shared test servers are. The Jest global setup fills these in for the workers. */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_TEST_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/** Superuser URL into the test server's maintenance database. */
export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

export function testAmqpUrl(): string {
  return process.env.TEST_AMQP_URL || DEFAULT_TEST_AMQP_URL;
}
