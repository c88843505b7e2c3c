import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './migrations',
  schemaFilter: ['invitation'],
  migrations: { schema: 'invitation', table: '__drizzle_migrations' },
});
