/** Black-box tests of the whole system as separate processes (tests-e2e/support/system.ts). */
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.e2e.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testTimeout: 120000,
  // Each file starts a whole system; one at a time keeps a 2-core machine honest.
  maxWorkers: 1,
  globalSetup: '<rootDir>/../libs/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/../libs/testing/src/global-teardown.ts',
};
