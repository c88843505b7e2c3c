// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.data/**', 'coverage/**', '**/migrations/**', 'docs/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // Domain code stays pure: no transport, driver or ORM imports (conventions.md rule 2).
    files: ['services/*/src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['express', 'amqplib', 'pg', 'drizzle-orm', 'drizzle-orm/*', '@sched/http', '@sched/db', '@sched/messaging'] }],
    },
  },
  {
    // The booking page's browser script (bundled by esbuild into the page's one script, type checked
    // with the DOM types by its own tsconfig.json, which projectService finds): it runs in the visitor's
    // browser, so it imports its own modules only, never Node's or the server's.
    files: ['services/gateway/src/booking-page/browser/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!\\./)', message: 'The booking page script runs in the browser: import only its own modules (./…).' }] }],
    },
  },
  {
    // Tests (and the provider fakes they run) read JSON field by field; typing every response shape there adds noise, not safety.
    files: ['**/test/**/*.ts', 'tests-e2e/**/*.ts', 'libs/testing/src/providers/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['scripts/**', 'tests-e2e/**', '**/*.mjs'],
    rules: { 'no-console': 'off' },
  },
  {
    // `npm start` runs this file before anything is installed: Node's own modules only (issue 15).
    files: ['scripts/start.mjs'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!node:)', message: 'scripts/start.mjs runs before the install step: import node: modules only, and load the rest with a dynamic import after it.' }] }],
    },
  },
);
