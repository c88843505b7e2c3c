export { createTestDatabase, type TestDatabase, type TestDatabaseOptions } from './test-database';
export { testAmqp, cleanupAmqpPrefix, type TestAmqp } from './test-amqp';
export { waitFor, type WaitForOptions } from './wait-for';
export { testDatabaseUrl, testAmqpUrl, DEFAULT_TEST_DATABASE_URL, DEFAULT_TEST_AMQP_URL } from './test-env';
export { planTestInfra, missingInfraMessage, tcpAnswers, type InfraSource, type InfraProbes, type Resource } from './test-infra';
export { startRadicale, type TestRadicale, type StartRadicaleOptions } from './radicale';
export { freePort, portOpen } from './free-port';
export { TEST_INTERNAL_AUTH_KEYS, internalAuthorization, credentialFor, claimsOf } from './internal-credentials';
