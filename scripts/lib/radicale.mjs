// Starts a Radicale CalDAV server on loopback with its data inside the project's ignored .data/ folder.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

export const DEMO_CALDAV_USER = 'demo';

const portOpen = (port) =>
  new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

export async function startRadicale({ dataDir, port, users = { [DEMO_CALDAV_USER]: 'demo-password' } }) {
  mkdirSync(join(dataDir, 'collections'), { recursive: true });
  const htpasswd = join(dataDir, 'users');
  writeFileSync(htpasswd, Object.entries(users).map(([u, p]) => `${u}:${p}`).join('\n') + '\n', { mode: 0o600 });
  const config = join(dataDir, 'config');
  writeFileSync(
    config,
    `[server]\nhosts = 127.0.0.1:${port}\n\n[auth]\ntype = htpasswd\nhtpasswd_filename = ${htpasswd}\nhtpasswd_encryption = plain\n\n` +
      `[storage]\nfilesystem_folder = ${join(dataDir, 'collections')}\n\n[rights]\ntype = owner_only\n\n[logging]\nlevel = warning\n`,
  );
  const url = `http://127.0.0.1:${port}`;
  if (await portOpen(port)) return { url, users, stop: async () => {}, reused: true };
  const child = spawn('radicale', ['--config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  for (let i = 0; i < 100; i++) {
    if (await portOpen(port)) break;
    if (child.exitCode !== null) throw new Error(`Radicale exited: ${stderr.trim()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    users,
    reused: false,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}
