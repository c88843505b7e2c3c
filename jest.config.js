/** One Jest run for the whole workspace; each test file gets its own database and exchange prefix (libs/testing). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/services'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testTimeout: 30000,
  maxWorkers: 2,
  globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/global-teardown.ts',
};
