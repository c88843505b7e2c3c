import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './migrations',
  schemaFilter: ['availability'],
  migrations: { schema: 'availability', table: '__drizzle_migrations' },
});
