import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './migrations',
  schemaFilter: ['webhook_dispatch'],
  migrations: { schema: 'webhook_dispatch', table: '__drizzle_migrations' },
});
