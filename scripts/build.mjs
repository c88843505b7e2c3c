// Bundles each service (and the migration runner) into one CommonJS file with esbuild.
// Everything is inlined (workspace libs and npm packages), so a bundle runs with plain `node` and no
// node_modules: the container image copies only dist/. The image runs exactly this step (deploy/Dockerfile).
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Optional native add-ons that the bundled packages only try to load.
const external = ['pg-native', 'cpu-features', 'bufferutil', 'utf-8-validate'];

const entries = readdirSync(join(root, 'services'))
  .filter((s) => existsSync(join(root, 'services', s, 'src/main.ts')))
  .map((s) => ({ in: join(root, 'services', s, 'src/main.ts'), out: join(root, 'services', s, 'dist/main.js') }));
entries.push({ in: join(root, 'scripts/migrate.ts'), out: join(root, 'dist/migrate.js') });

const started = Date.now();
await Promise.all(
  entries.map((e) =>
    build({
      entryPoints: [e.in],
      outfile: e.out,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      sourcemap: 'inline',
      logLevel: 'warning',
      external,
    }),
  ),
);
console.log(`build: ${entries.length} bundles in ${Date.now() - started} ms`);
