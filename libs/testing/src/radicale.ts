import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freePort, portOpen } from './free-port';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A real Radicale CalDAV server on loopback: htpasswd users (plain passwords), owner-only rights. The
 * one launcher of the project: tests take a temporary data folder and a free port (the defaults), and
 * `npm start` (scripts/lib/start-system.mjs) a kept folder under .data/ and a fixed port. stop() and
 * start() keep the port and the data, so a test can simulate a provider outage and its recovery.
 */
export interface TestRadicale {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  port: number;
  dataDir: string;
  users: Readonly<Record<string, string>>;
  /** The collection URL `<url>/<user>/<name>/` (with trailing slash, as CalDAV names collections). */
  calendarUrl(user: string, name: string): string;
  /** MKCALENDAR; an existing calendar is fine. Returns its URL. */
  makeCalendar(user: string, name: string): Promise<string>;
  /** PUT an iCalendar object into a calendar; returns the object's URL. */
  putObject(user: string, calendar: string, filename: string, ics: string): Promise<string>;
  /** GET an object: its iCalendar text, or null when it does not exist. */
  getObject(user: string, calendar: string, filename: string): Promise<string | null>;
  /** Names of the .ics objects in a calendar (PROPFIND depth 1). */
  listObjects(user: string, calendar: string): Promise<string[]>;
  deleteObject(user: string, calendar: string, filename: string): Promise<void>;
  isRunning(): boolean;
  /** The process id while it runs. */
  pid(): number | undefined;
  /** Stops the process (SIGTERM), keeping port and data. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops it and removes the data folder (unless it was given). Safe to call twice. */
  close(): Promise<void>;
}

export interface StartRadicaleOptions {
  /** user → password; default one user `alice` with password `alice-password`. */
  users?: Record<string, string>;
  /** How long to wait for the port to open. Default 15 s (Python starts slowly on a busy machine). */
  startTimeoutMs?: number;
  /** A data folder to use and keep (close() leaves it); default a temporary one that close() removes. */
  dataDir?: string;
  /** The port; default a free one. A port already in use is refused with a clear error. */
  port?: number;
  /**
   * The CPU nice value to run at (0..19; default 0, this process's priority): `npm start` and the
   * whole-system harness run the calendar provider at the background services' lower priority. Only ever
   * lowers the priority, as CPU_NICE does for a service. Kept by stop() and start().
   */
  nice?: number;
}

export async function startRadicale(opts: StartRadicaleOptions = {}): Promise<TestRadicale> {
  const users = { ...(opts.users ?? { alice: 'alice-password' }) };
  const nice = opts.nice ?? 0;
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new Error(`startRadicale: nice must be an integer from 0 to 19, got ${nice}`);
  const keepData = opts.dataDir !== undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'sched-radicale-'));
  mkdirSync(dataDir, { recursive: true });
  const htpasswd = join(dataDir, 'users');
  writeFileSync(htpasswd, Object.entries(users).map(([u, p]) => `${u}:${p}`).join('\n') + '\n', { mode: 0o600 });
  const port = opts.port ?? (await freePort());
  if (opts.port !== undefined && (await portOpen(port))) {
    throw new Error(`port ${port} is already in use, so Radicale cannot listen there (another Radicale? choose another port, e.g. RADICALE_PORT)`);
  }
  const configFile = join(dataDir, 'config');
  writeFileSync(
    configFile,
    `[server]\nhosts = 127.0.0.1:${port}\n\n` +
      `[auth]\ntype = htpasswd\nhtpasswd_filename = ${htpasswd}\nhtpasswd_encryption = plain\n\n` +
      `[storage]\nfilesystem_folder = ${join(dataDir, 'collections')}\n\n` +
      `[rights]\ntype = owner_only\n\n[logging]\nlevel = warning\n`,
  );
  const url = `http://127.0.0.1:${port}`;
  const startTimeoutMs = opts.startTimeoutMs ?? 15_000;
  let child: ChildProcess | undefined;
  let closed = false;

  async function start(): Promise<void> {
    if (child && child.exitCode === null) return;
    // `nice -n` adds to the current value, and the whole process (each thread Python starts) inherits it.
    const increment = Math.max(0, nice - getPriority());
    const command = ['radicale', '--config', configFile];
    const proc = increment > 0 ? spawn('nice', ['-n', String(increment), ...command], { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let stderr = '';
    let spawnError: Error | undefined;
    proc.once('error', (err) => (spawnError = err));
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = Date.now() + startTimeoutMs;
    while (Date.now() < deadline) {
      if (spawnError) throw new Error(`Radicale could not be started (is it installed? \`radicale --config FILE\`): ${spawnError.message}`);
      if (await portOpen(port)) return;
      if (proc.exitCode !== null) throw new Error(`Radicale exited during start: ${stderr.trim()}`);
      await sleep(50);
    }
    proc.kill('SIGKILL');
    throw new Error(`Radicale did not open port ${port} within ${startTimeoutMs} ms`);
  }

  async function stop(): Promise<void> {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => proc.kill('SIGKILL'), 5000);
      proc.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      proc.kill('SIGTERM');
    });
    // The listening socket is gone once the process is: wait until connections are refused.
    while (await portOpen(port)) await sleep(20);
  }

  const auth = (user: string) => `Basic ${Buffer.from(`${user}:${users[user] ?? ''}`).toString('base64')}`;
  const calendarUrl = (user: string, name: string) => `${url}/${encodeURIComponent(user)}/${encodeURIComponent(name)}/`;
  const objectUrl = (user: string, calendar: string, filename: string) => `${calendarUrl(user, calendar)}${encodeURIComponent(filename)}`;

  // node:http, the whole answer read before it is handed on, rather than fetch: a process that has loaded the
  // undici package sends fetch through that package's dispatcher, and undici 7 ends the process when a
  // server closes the connection right after an answer whose body is still being read (nodejs/undici#5360,
  // fixed in undici 8, which needs Node 22) — which is what Radicale does after every request.
  function dav(method: string, target: string, user: string, body?: string, headers: Record<string, string> = {}): Promise<Response> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(target, { method, headers: { authorization: auth(user), ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(payload, { status, headers: Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])) }));
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  try {
    await start();
  } catch (err) {
    if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }

  return {
    url,
    port,
    dataDir,
    users,
    calendarUrl,
    async makeCalendar(user, name) {
      const target = calendarUrl(user, name);
      const res = await dav(
        'MKCALENDAR',
        target,
        user,
        `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">` +
          `<D:set><D:prop><D:displayname>${name}</D:displayname></D:prop></D:set></C:mkcalendar>`,
        { 'content-type': 'application/xml; charset=utf-8' },
      );
      if (res.status !== 201 && res.status !== 409) throw new Error(`MKCALENDAR ${name}: ${res.status}`);
      return target;
    },
    async putObject(user, calendar, filename, ics) {
      const target = objectUrl(user, calendar, filename);
      const res = await dav('PUT', target, user, ics, { 'content-type': 'text/calendar; charset=utf-8' });
      if (res.status !== 201 && res.status !== 204) throw new Error(`PUT ${filename}: ${res.status} ${await res.text()}`);
      return target;
    },
    async getObject(user, calendar, filename) {
      const res = await dav('GET', objectUrl(user, calendar, filename), user);
      if (res.status === 404) return null;
      if (!res.ok) throw new Error(`GET ${filename}: ${res.status}`);
      return res.text();
    },
    async listObjects(user, calendar) {
      const res = await dav(
        'PROPFIND',
        calendarUrl(user, calendar),
        user,
        `<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>`,
        { depth: '1', 'content-type': 'application/xml; charset=utf-8' },
      );
      if (res.status !== 207) throw new Error(`PROPFIND ${calendar}: ${res.status}`);
      const xml = await res.text();
      return [...xml.matchAll(/<(?:\w+:)?href>([^<]+\.ics)<\/(?:\w+:)?href>/g)].map((m) => decodeURIComponent(m[1]!.split('/').pop()!));
    },
    async deleteObject(user, calendar, filename) {
      const res = await dav('DELETE', objectUrl(user, calendar, filename), user);
      if (!res.ok && res.status !== 404) throw new Error(`DELETE ${filename}: ${res.status}`);
    },
    isRunning: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    pid: () => (child !== undefined && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    stop,
    start: async () => {
      if (closed) throw new Error('this Radicale was closed');
      await start();
    },
    async close() {
      if (closed) return;
      closed = true;
      await stop();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
