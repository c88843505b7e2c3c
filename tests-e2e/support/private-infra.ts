import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { portOpen } from '@sched/testing';
import { freePort } from './system';

/**
 * Disposable PostgreSQL and RabbitMQ servers for the resilience suite, which stops and starts them.
 * The machine's shared servers (5432, 5672) are used by other work and CI at the same time and are
 * never touched: these are separate processes with their own data folders, ports and (for RabbitMQ)
 * node name and Erlang cookie, so no command sent here can reach the shared node.
 * startSystem() picks them up through TEST_DATABASE_URL / TEST_AMQP_URL (libs/testing/src/test-env.ts).
 */

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;

/** initdb refuses root, and RabbitMQ's files belong to its user: run as that user when we are root. */
function asUser(user: string, cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  if (isRoot) return run('runuser', ['-u', user, '--', 'env', ...envArgs, cmd, ...args], { timeout: 60_000 });
  return run('env', [...envArgs, cmd, ...args], { timeout: 60_000 });
}

async function waitPort(port: number, open: boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await portOpen(port)) === open) return;
    await sleep(100);
  }
  throw new Error(`${what}: port ${port} did not ${open ? 'open' : 'close'} within ${timeoutMs} ms`);
}

export interface PrivateServer {
  /** Superuser URL (Postgres: into the `postgres` database; RabbitMQ: guest on loopback). */
  url: string;
  port: number;
  /** Takes the server away: clients see connections refused. */
  stop(): Promise<void>;
  /** Brings it back on the same port with the same data. */
  start(): Promise<void>;
  /** Stops it and deletes its folder. Safe to call twice. */
  close(): Promise<void>;
}

function pgBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => path.join(base, v, 'bin')).find((d) => existsSync(path.join(d, 'pg_ctl')));
  if (!found) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)');
  return found;
}

/** A throwaway PostgreSQL cluster (trust auth, fsync off: its data is thrown away). */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const bin = pgBin();
  const dir = mkdtempSync(path.join(tmpdir(), 'resil-pg-'));
  chmodSync(dir, 0o755);
  if (isRoot) chownSync(dir, ...(await uidGid('postgres')));
  const port = await freePort();
  const data = path.join(dir, 'data');
  await asUser('postgres', path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-N', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=200`;
  const pgCtl = (...args: string[]) => asUser('postgres', path.join(bin, 'pg_ctl'), ['-D', data, ...args]);
  let closed = false;
  const server: PrivateServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    // Fast shutdown: open sessions are ended, as in a real restart or failover.
    stop: async () => {
      await pgCtl('-m', 'fast', '-w', 'stop');
      await waitPort(port, false, 10_000, 'postgres stop');
    },
    start: async () => {
      await pgCtl('-l', path.join(dir, 'log'), '-w', '-t', '60', '-o', opts, 'start');
      await waitPort(port, true, 10_000, 'postgres start');
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await pgCtl('-m', 'immediate', '-w', 'stop').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

async function uidGid(user: string): Promise<[number, number]> {
  const { stdout } = await run('id', ['-u', user]);
  const { stdout: g } = await run('id', ['-g', user]);
  return [Number(stdout.trim()), Number(g.trim())];
}

const RABBIT_BIN = '/usr/lib/rabbitmq/bin';

/**
 * A throwaway RabbitMQ node: its own node name, AMQP and distribution ports, data, logs, empty plugin
 * list and Erlang cookie (HOME is its folder). Its own config file replaces /etc/rabbitmq/rabbitmq.conf,
 * whose listener is the shared node's 5672.
 */
export async function startPrivateRabbit(): Promise<PrivateServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'resil-rmq-'));
  chmodSync(dir, 0o755);
  const [port, distPort] = [await freePort(), await freePort()];
  const node = `resil${randomBytes(4).toString('hex')}@localhost`;
  writeFileSync(path.join(dir, 'plugins'), '[].\n');
  writeFileSync(path.join(dir, '.erlang.cookie'), randomBytes(16).toString('hex').toUpperCase(), { mode: 0o400 });
  writeFileSync(path.join(dir, 'rabbitmq.conf'), `listeners.tcp.local = 127.0.0.1:${port}\nloopback_users.guest = true\n`);
  writeFileSync(path.join(dir, 'env.conf'), 'ERL_EPMD_ADDRESS=127.0.0.1\n');
  if (isRoot) await run('chown', ['-R', 'rabbitmq:rabbitmq', dir]);
  const env = {
    HOME: dir,
    RABBITMQ_NODENAME: node,
    RABBITMQ_CONF_ENV_FILE: path.join(dir, 'env.conf'),
    RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq.conf'),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(dir, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'plugins'),
    RABBITMQ_PID_FILE: path.join(dir, 'pid'),
    ERL_FLAGS: '-kernel inet_dist_use_interface {127,0,0,1}',
  };
  const ctl = (...args: string[]) => asUser('rabbitmq', path.join(RABBIT_BIN, 'rabbitmqctl'), ['-n', node, ...args], { HOME: dir });
  let closed = false;
  let nodeUp = false;
  const server: PrivateServer = {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    port,
    // stop_app ends the AMQP listener and every connection (what clients see of a broker outage)
    // while the Erlang node stays up to answer start_app.
    stop: async () => {
      await ctl('stop_app');
      await waitPort(port, false, 20_000, 'rabbitmq stop_app');
    },
    start: async () => {
      if (!nodeUp) {
        await asUser('rabbitmq', path.join(RABBIT_BIN, 'rabbitmq-server'), ['-detached'], env);
        nodeUp = true;
      } else {
        await ctl('start_app');
      }
      await waitPort(port, true, 60_000, 'rabbitmq start');
    },
    close: async () => {
      if (closed) return;
      closed = true;
      // With the pid file, `stop` returns only once the Erlang VM has exited.
      if (nodeUp) await ctl('stop', path.join(dir, 'pid')).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (err) {
    await server.close();
    throw err;
  }
  return server;
}

/** Points startSystem() (createTestDatabase, testAmqp) at the private servers. */
export function usePrivateInfra(pg: PrivateServer, rabbit: PrivateServer): void {
  process.env.TEST_DATABASE_URL = pg.url;
  process.env.TEST_AMQP_URL = rabbit.url;
}
