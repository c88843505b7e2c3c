import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './migrations',
  schemaFilter: ['gateway'],
  migrations: { schema: 'gateway', table: '__drizzle_migrations' },
});
