/** The API fuzz (`pnpm test:fuzz`): one whole system, every v1 and admin operation of the OpenAPI document. */
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/**/*.fuzz.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testTimeout: 600000,
  maxWorkers: 1,
  globalSetup: '<rootDir>/../../libs/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/../../libs/testing/src/global-teardown.ts',
};
