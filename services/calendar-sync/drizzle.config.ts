import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './migrations',
  schemaFilter: ['calendar_sync'],
  migrations: { schema: 'calendar_sync', table: '__drizzle_migrations' },
});
