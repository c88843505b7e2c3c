/**
 * The resilience suite (`pnpm test:resilience`): the whole system as separate processes, on its own
 * disposable PostgreSQL and RabbitMQ (tests-e2e/support/private-infra.ts), which the scenarios stop and
 * start. No global setup: the machine's shared servers are never used, let alone stopped.
 */
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/**/*.resilience.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testTimeout: 600000,
  // Each file starts a whole system and its own servers; one at a time on a 2-core machine.
  maxWorkers: 1,
  globalSetup: '<rootDir>/global-setup.ts',
};
