// Bundles each service (and the migration runner) into one CommonJS file with esbuild.
// Everything is inlined (workspace libs and npm packages), so a bundle runs with plain `node` and no
// node_modules: the container image copies only dist/. The image runs exactly this step (deploy/Dockerfile).
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { require as tsxRequire } from 'tsx/cjs/api';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Optional native add-ons that the bundled packages only try to load.
const external = ['pg-native', 'cpu-features', 'bufferutil', 'utf-8-validate'];

/**
 * The booking page's browser script is bundled here, at build time: the gateway's
 * `booking-page/page-script.ts` bundles it with esbuild when first asked, so this build asks it once
 * and puts in its place a module that returns the finished string. The gateway bundle then carries
 * the script, not esbuild.
 */
const browserScripts = {
  name: 'browser-scripts',
  setup(b) {
    b.onLoad({ filter: /[\\/]gateway[\\/]src[\\/]booking-page[\\/]page-script\.ts$/ }, (args) => {
      const script = tsxRequire(args.path, import.meta.url).bookingPageScript();
      if (typeof script !== 'string') throw new Error(`${args.path}: bookingPageScript() gave no script`);
      return { contents: `export function bookingPageScript(): string {\n  return ${JSON.stringify(script)};\n}\n`, loader: 'ts' };
    });
  },
};

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
      // Beside the bundle (main.js.map), not inline: the services run without --enable-source-maps
      // (scripts/lib/services.mjs SERVICE_NODE_ARGS); scripts/map-stack.mjs reads it.
      sourcemap: 'linked',
      logLevel: 'warning',
      external,
      plugins: [browserScripts],
    }),
  ),
);
console.log(`build: ${entries.length} bundles in ${Date.now() - started} ms`);
