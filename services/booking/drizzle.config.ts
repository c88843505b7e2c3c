import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './migrations',
  schemaFilter: ['booking'],
  migrations: { schema: 'booking', table: '__drizzle_migrations' },
});
