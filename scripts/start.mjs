// `npm start`: the whole system on this machine. Installs what is missing, starts PostgreSQL, RabbitMQ
// and Radicale, migrates, builds, runs the six services as separate processes with readable prefixed
// logs, seeds a demo workspace once and prints how to call it. Ctrl-C stops everything cleanly.
//
// This file runs on a machine that may have no pnpm and no node_modules yet, so it imports Node's own
// modules only (eslint refuses anything else here): it installs first, then loads the rest of the start
// (scripts/lib/start-system.mjs), which may use the workspace's dependencies.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const setup = spawnSync('bash', ['scripts/ensure-infra.sh'], { cwd: root, stdio: 'inherit' });
if (setup.status !== 0) {
  console.error("[start] 'bash scripts/ensure-infra.sh' failed; see the lines above.");
  process.exit(1);
}
const { startSystem } = await import('./lib/start-system.mjs');
await startSystem(root);
