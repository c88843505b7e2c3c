// The part of `npm start` that runs once scripts/ensure-infra.sh has installed the workspace (see
// scripts/start.mjs): build, migrate, Radicale, the six services (each with background work as an API
// process and a worker process, scripts/lib/services.mjs processPlan), the demo workspace and the banner.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';
import { prettyLine } from './pretty-log.mjs';
import { RADICALE_PORT, SERVICE_NODE_ARGS, backgroundCpuNice, gatewayOpsPort, processPlan, servicePorts, upstreamEnv } from './services.mjs';
import { seedDemo } from './seed-demo.mjs';
import { startWebhookReceiver } from './webhook-receiver.mjs';

export const DEMO_CALDAV_USERS = { demo: 'demo-password' };

export async function startSystem(root) {
  const dataDir = join(root, '.data');
  mkdirSync(dataDir, { recursive: true });
  const say = (msg) => console.log(`[start] ${msg}`);

  function step(cmd, args) {
    const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) {
      console.error(`[start] '${[cmd, ...args].join(' ')}' failed; see the lines above.`);
      process.exit(1);
    }
  }

  /** Development secrets made once and kept in the ignored .data/ folder; real deployments set them in the environment. */
  function devSecrets() {
    const file = join(dataDir, 'dev-secrets.json');
    const saved = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    const make = () => randomBytes(32).toString('base64url');
    // The key ring (docs/security.md): SECRETS_KEYS from the environment or the file; the SECRETS_KEY of an
    // older file becomes k1 (what its sealed values name); SECRETS_KEY in the environment is used as before.
    const ring = process.env.SECRETS_KEYS ?? (process.env.SECRETS_KEY ? undefined : saved.SECRETS_KEYS ?? `k1:${saved.SECRETS_KEY ?? randomBytes(32).toString('base64')}`);
    const secrets = {
      ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? saved.ADMIN_TOKEN ?? make(),
      ...(ring ? { SECRETS_KEYS: ring } : { SECRETS_KEY: process.env.SECRETS_KEY }),
      CURSOR_SECRET: process.env.CURSOR_SECRET ?? saved.CURSOR_SECRET ?? make(),
      // Signs the credential of every call between the services (docs/security.md, "Trust inside the cluster").
      INTERNAL_AUTH_KEYS: process.env.INTERNAL_AUTH_KEYS ?? saved.INTERNAL_AUTH_KEYS ?? `k1:${randomBytes(32).toString('base64')}`,
    };
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
    return secrets;
  }

  const ports = servicePorts(process.env);
  // Every service's API process, and a worker process beside each one with background work.
  const plan = processPlan(process.env);
  // The gateway answers /readyz on its operations port only (deploy/README.md, "Network").
  const opsPort = gatewayOpsPort(process.env, ports);
  const readyPort = (proc) => (proc.name === 'gateway' ? opsPort : proc.port);
  // The workers and the calendar provider give way to the API during a burst.
  const backgroundNice = backgroundCpuNice(process.env);

  async function waitReady(proc, children) {
    const deadline = Date.now() + 60000;
    while (Date.now() < deadline) {
      if (children.get(proc.name)?.exitCode !== null) throw new Error(`${proc.name} exited during start-up (see its log lines above)`);
      try {
        const res = await fetch(`http://127.0.0.1:${readyPort(proc)}/readyz`);
        if (res.ok) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`${proc.name} was not ready on :${readyPort(proc)} within 60 s`);
  }

  say('building services');
  step('pnpm', ['run', '-s', 'build']);
  say('applying migrations');
  step('node', ['--enable-source-maps', 'dist/migrate.js']);

  const secrets = devSecrets();
  // The one Radicale launcher, shared with the tests (libs/testing); its data stays in .data/radicale.
  const { startRadicale } = await tsImport('../../libs/testing/src/radicale.ts', import.meta.url);
  const radicale = await startRadicale({
    users: DEMO_CALDAV_USERS,
    dataDir: join(dataDir, 'radicale'),
    port: Number(process.env.RADICALE_PORT ?? RADICALE_PORT),
    nice: backgroundNice,
  });
  say(`Radicale (CalDAV) on ${radicale.url}`);
  let webhookSecret = null;
  const receiver = await startWebhookReceiver({ port: Number(process.env.WEBHOOK_RECEIVER_PORT ?? 8090), getSecret: () => webhookSecret });

  const children = new Map();
  let stopping = false;
  const bookingPageUrl = process.env.BOOKING_PAGE_URL ?? `http://localhost:${ports.gateway}/book`;
  const baseEnv = { ...process.env, ...secrets, ...upstreamEnv(ports), BOOKING_PAGE_URL: bookingPageUrl, NODE_ENV: process.env.NODE_ENV ?? 'development' };
  plan.forEach((proc, i) => {
    // One bundle per service; the role is a setting (PROCESS_ROLE).
    const child = spawn('node', [...SERVICE_NODE_ARGS, join(root, 'services', proc.service, 'dist/main.js')], {
      cwd: root,
      env: {
        ...baseEnv,
        PORT: String(proc.port),
        PROCESS_ROLE: proc.role,
        ...(proc.name === 'gateway' ? { OPS_PORT: String(opsPort) } : {}),
        HOST: proc.name === 'gateway' ? process.env.GATEWAY_HOST ?? '127.0.0.1' : '127.0.0.1',
        ...(proc.cpuNice !== undefined ? { CPU_NICE: String(proc.cpuNice) } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Own process group: Ctrl-C reaches only this script, which then stops each service once, in order.
      detached: true,
    });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (l) => console.log(prettyLine(proc.name, i, l)));
    }
    child.on('exit', (code, signal) => {
      if (!stopping) {
        say(`${proc.name} stopped (${signal ?? `exit ${code}`}); stopping everything`);
        void shutdown(1);
      }
    });
    children.set(proc.name, child);
  });

  async function shutdown(code = 0) {
    if (stopping) return;
    stopping = true;
    say('stopping services');
    const exits = [...children.values()].filter((c) => c.exitCode === null).map((c) => new Promise((r) => {
      c.once('exit', r);
      c.kill('SIGTERM');
    }));
    const timer = setTimeout(() => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')), 15000);
    await Promise.all(exits);
    clearTimeout(timer);
    await radicale.stop();
    await receiver.close();
    say('stopped');
    process.exit(code);
  }
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  process.on('SIGHUP', () => void shutdown(0));
  // If this script dies without a chance to stop them, do not leave services behind.
  process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

  try {
    for (const proc of plan) await waitReady(proc, children);
  } catch (err) {
    say(String(err.message ?? err));
    await shutdown(1);
  }

  const gateway = `http://127.0.0.1:${ports.gateway}`;
  let demo;
  try {
    demo = await seedDemo({ gateway, adminToken: secrets.ADMIN_TOKEN, dataDir, radicale, webhookUrl: receiver.url, bookingPageUrl });
  } catch (err) {
    say(`seeding the demo workspace failed: ${err.message}`);
    await shutdown(1);
  }
  webhookSecret = demo.webhookSecret;
  const line = '─'.repeat(72);
  console.log(`\n${line}
 Scheduling service is up.
   Gateway:        ${gateway}
   Processes:      ${plan.length}: each service's API, and its background work in <service>-worker (port + 100)
   Admin token:    ${secrets.ADMIN_TOKEN}   (ADMIN_TOKEN; .data/dev-secrets.json)
   Demo workspace: ${demo.workspaceId}
   Demo API key:   ${demo.apiKey}
${demo.extraLines.map((l) => `   ${l}`).join('\n')}
 Try:
${demo.curls.map((c) => `   ${c}`).join('\n')}
 Ctrl-C stops everything.
${line}\n`);
}
