import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'pg';
import { freePort, portOpen, waitFor } from '@sched/testing';

/**
 * Issue 15: the README's first command, as a newcomer types it on a machine that has never seen the
 * project. The working tree is cloned into a temporary folder (no node_modules, no .data/) and
 * `npm start` runs there with no environment beyond what a shell has, on a PATH without pnpm, so the
 * start must install pnpm and the workspace itself before it loads anything of the workspace. Then
 * the three curl lines the banner prints are run as printed, the demo's webhook receiver must print
 * `[webhooks] booking.created`, and Ctrl-C (SIGINT to the process group, as a terminal sends it) must
 * leave no process and no open port behind. A second `npm start` in the same clone reuses the demo
 * workspace instead of seeding another.
 */

const ROOT = path.resolve(__dirname, '../..');
const FIRST_RUN_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_PORTS: Record<string, number> = {
  GATEWAY_PORT: 8080,
  // The gateway's /readyz and /metrics (its port + 1000 by default).
  GATEWAY_OPS_PORT: 9080,
  BOOKING_PORT: 8081,
  AVAILABILITY_PORT: 8082,
  INVITATION_PORT: 8083,
  CALENDAR_SYNC_PORT: 8084,
  WEBHOOK_DISPATCH_PORT: 8085,
  // The workers' /healthz, /readyz and /metrics (each service's port + 100 by default).
  BOOKING_WORKER_PORT: 8181,
  AVAILABILITY_WORKER_PORT: 8182,
  INVITATION_WORKER_PORT: 8183,
  CALENDAR_SYNC_WORKER_PORT: 8184,
  WEBHOOK_DISPATCH_WORKER_PORT: 8185,
  WEBHOOK_RECEIVER_PORT: 8090,
  RADICALE_PORT: 5232,
};

/**
 * A PATH as on a machine without pnpm: every PATH folder that holds pnpm is replaced by a folder of
 * links to everything else in it, and npm's global prefix is a fresh folder (first on PATH), so the
 * start's `npm install -g pnpm@10` lands there.
 */
function machineWithoutPnpm(scratch: string): { PATH: string; npm_config_prefix: string } {
  const prefix = path.join(scratch, 'npm-global');
  mkdirSync(path.join(prefix, 'bin'), { recursive: true });
  const dirs = (process.env.PATH ?? '/usr/bin:/bin').split(':').filter(Boolean);
  const shadowed = dirs.map((dir, i) => {
    if (!existsSync(path.join(dir, 'pnpm'))) return dir;
    const shadow = path.join(scratch, `path-${i}`);
    mkdirSync(shadow);
    for (const entry of readdirSync(dir)) {
      if (entry === 'pnpm' || entry === 'pnpx') continue;
      symlinkSync(path.join(dir, entry), path.join(shadow, entry));
    }
    return shadow;
  });
  return { PATH: [path.join(prefix, 'bin'), ...shadowed].join(':'), npm_config_prefix: prefix };
}

interface StartRun {
  child: ChildProcess;
  lines: string[];
  /** When npm and everything that shares its output (the start script) have ended: npm's code or signal. */
  exited: Promise<string>;
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
}

function npmStart(cwd: string, env: NodeJS.ProcessEnv): StartRun {
  // Its own process group, so SIGINT can go to the whole group as a terminal's Ctrl-C does.
  const child = spawn('npm', ['start'], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (l) => lines.push(l));
  // 'close' comes once every writer of the pipes is gone: npm, and the start script that npm ran.
  const exited = new Promise<string>((resolve) => child.once('close', (code, signal) => resolve(signal ?? `exit ${code}`)));
  const transcript = () => lines.slice(-60).join('\n');
  return {
    child,
    lines,
    exited,
    async waitForLine(pattern, timeoutMs) {
      try {
        return await waitFor(
          () => {
            const found = lines.find((l) => pattern.test(l));
            if (found) return found;
            if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}) before printing ${pattern}`);
            return undefined;
          },
          { timeoutMs, intervalMs: 200 },
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}\n--- last lines of npm start ---\n${transcript()}`);
      }
    },
  };
}

/** Processes whose command line names the clone (services, Radicale, the start script itself). */
function processesOf(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(dir)) found.push(`${pid}: ${cmd.trim()}`);
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

/** Ctrl-C as a terminal sends it; resolves with how npm ended (npm itself dies of the SIGINT, as in a shell). */
async function stopWithCtrlC(run: StartRun): Promise<string> {
  process.kill(-run.child.pid!, 'SIGINT');
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000).unref());
  const code = await Promise.race([run.exited, timeout]);
  if (code === 'timeout') throw new Error(`npm start did not stop within 60 s of SIGINT\n${run.lines.slice(-30).join('\n')}`);
  return code;
}

/** The curl lines under " Try:" in the banner, as printed. */
function printedCurls(lines: string[]): string[] {
  const at = lines.findIndex((l) => l.trim() === 'Try:');
  return lines.slice(at + 1).map((l) => l.trim()).filter((l, i, all) => l.startsWith('curl ') && all.slice(0, i).every((p) => p.startsWith('curl ')));
}

/** Runs a printed curl line through bash as a user would, adding only `-w` to read the status. */
function runCurl(line: string): { status: number; body: any } {
  const r = spawnSync('bash', ['-c', `${line} -w '\\n%{http_code}'`], { encoding: 'utf8', timeout: 30_000 });
  const out = r.stdout.trimEnd();
  const cut = out.lastIndexOf('\n');
  return { status: Number(out.slice(cut + 1)), body: JSON.parse(out.slice(0, cut)) };
}

function bannerValue(lines: string[], label: string): string {
  const line = lines.find((l) => l.trim().startsWith(`${label}:`));
  if (!line) throw new Error(`the banner has no '${label}:' line`);
  return line.trim().slice(label.length + 1).trim().split(/\s+/)[0]!;
}

describe('npm start in a fresh clone (issue 15)', () => {
  let scratch: string;
  let clone: string;
  let env: NodeJS.ProcessEnv;
  let ports: Record<string, number>;
  const runs: StartRun[] = [];

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'sched-first-run-'));
    clone = path.join(scratch, 'clone');
    const cloned = spawnSync('git', ['clone', '-q', ROOT, clone], { encoding: 'utf8' });
    if (cloned.status !== 0) throw new Error(`git clone failed: ${cloned.stderr}`);
    // What a newcomer's shell has, and nothing of this test run's (no NODE_ENV=test, no CI, no test URLs).
    env = { HOME: process.env.HOME, USER: process.env.USER, LANG: 'C.UTF-8', TERM: 'dumb', ...machineWithoutPnpm(scratch) };
    // The defaults when they are free (as on a newcomer's machine); other ports only where they are taken.
    ports = { ...DEFAULT_PORTS };
    const taken = [];
    for (const [name, port] of Object.entries(DEFAULT_PORTS)) {
      if (await portOpen(port)) {
        ports[name] = await freePort();
        env[name] = String(ports[name]);
        taken.push(port);
      }
      // A worker's default follows its service's port, which may have moved: name it either way.
      if (name.endsWith('_WORKER_PORT')) env[name] = String(ports[name]);
    }
    // Another system holds the default ports: keep this one's queues apart from it (README: AMQP_PREFIX).
    if (taken.length > 0) env.AMQP_PREFIX = `first_run_${process.pid}.`;
  });

  afterAll(async () => {
    for (const run of runs) {
      if (run.child.exitCode === null && run.child.signalCode === null) process.kill(-run.child.pid!, 'SIGKILL');
    }
    for (const line of processesOf(clone)) process.kill(Number(line.split(':')[0]), 'SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  });

  it(
    'installs, starts, answers the printed curl lines, delivers the webhook, stops on Ctrl-C, and reuses the demo on the next start',
    async () => {
      expect(existsSync(path.join(clone, 'node_modules'))).toBe(false);
      expect(existsSync(path.join(clone, '.data'))).toBe(false);
      expect(spawnSync('bash', ['-c', 'command -v pnpm'], { env }).status).not.toBe(0);
      const startedAt = new Date();

      // First start: installs pnpm and the workspace, builds, migrates, seeds.
      const first = npmStart(clone, env);
      runs.push(first);
      await first.waitForLine(/Scheduling service is up\./, FIRST_RUN_TIMEOUT_MS);
      await first.waitForLine(/Ctrl-C stops everything\./, 10_000);
      expect(first.lines.join('\n')).toMatch(/\[setup\] installing pnpm/);
      expect(first.lines.join('\n')).toMatch(/\[setup\] installing dependencies/);
      expect(first.lines.join('\n')).toMatch(/\[start\] seeded demo workspace wsp_/);
      const workspaceId = bannerValue(first.lines, 'Demo workspace');

      const curls = printedCurls(first.lines);
      expect(curls).toHaveLength(3);
      const [list, slots, create] = curls.map(runCurl);
      expect(list!.status).toBe(200);
      expect(list!.body.data.length).toBeGreaterThan(0);
      expect(slots!.status).toBe(200);
      expect(slots!.body.data.length).toBeGreaterThan(0);
      expect(create!.status).toBe(201);
      expect(create!.body.data).toMatchObject({ status: 'confirmed', start_at: slots!.body.data[0].start_at });
      const bookingId: string = create!.body.data.id;

      const delivered = await first.waitForLine(new RegExp(`\\[webhooks\\] booking\\.created \\S+ booking=${bookingId}`), 60_000);
      expect(delivered).toContain('status=confirmed');

      expect(['exit 0', 'SIGINT']).toContain(await stopWithCtrlC(first));
      expect(first.lines.join('\n')).toMatch(/\[start\] stopped/);
      expect(first.lines.join('\n')).not.toMatch(/; stopping everything/);
      expect(processesOf(clone)).toEqual([]);
      for (const port of Object.values(ports)) expect({ port, open: await portOpen(port) }).toEqual({ port, open: false });

      // Second start in the same clone: nothing to install, and the same demo workspace.
      const second = npmStart(clone, env);
      runs.push(second);
      await second.waitForLine(/Scheduling service is up\./, 5 * 60_000);
      await second.waitForLine(/Ctrl-C stops everything\./, 10_000);
      expect(second.lines.join('\n')).toContain(`[start] reusing demo workspace ${workspaceId}`);
      expect(second.lines.join('\n')).not.toMatch(/seeded demo workspace/);
      expect(bannerValue(second.lines, 'Demo workspace')).toBe(workspaceId);
      const again = printedCurls(second.lines).map(runCurl);
      expect(again.map((r) => r.status)).toEqual([200, 200, 201]);

      // One demo workspace made by these two starts, not two.
      const db = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/scheduling' });
      await db.connect();
      try {
        const made = await db.query(`SELECT id FROM gateway.workspaces WHERE created_at >= $1`, [startedAt]);
        expect(made.rows.map((r) => r.id)).toEqual([workspaceId]);
      } finally {
        await db.end();
      }

      expect(['exit 0', 'SIGINT']).toContain(await stopWithCtrlC(second));
      expect(second.lines.join('\n')).toMatch(/\[start\] stopped/);
      expect(second.lines.join('\n')).not.toMatch(/; stopping everything/);
      expect(processesOf(clone)).toEqual([]);
      for (const port of Object.values(ports)) expect({ port, open: await portOpen(port) }).toEqual({ port, open: false });
      expect(statSync(path.join(clone, '.data', 'demo.json')).isFile()).toBe(true);
    },
    FIRST_RUN_TIMEOUT_MS + 5 * 60_000,
  );
});
