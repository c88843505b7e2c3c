import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = path.resolve(__dirname, '../../..');

export interface Child {
  proc: ChildProcess;
  /** Last lines of its output, for the error when it fails to start. */
  tail: string[];
  stop(): Promise<void>;
}

/** A TypeScript entry point as its own node process (tsx), with its output kept for errors only. */
export function startChild(entry: string, args: string[], env: Record<string, string>, nodeArgs: string[] = []): Child {
  return childOf(spawn(process.execPath, [...nodeArgs, '--import', 'tsx', entry, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
}

function childOf(proc: ChildProcess): Child {
  const tail: string[] = [];
  for (const stream of [proc.stdout!, proc.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      tail.push(line);
      if (tail.length > 30) tail.shift();
    });
  }
  return {
    proc,
    tail,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        proc.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        proc.kill('SIGTERM');
      }),
  };
}

/**
 * A service as its own process: with BENCH_BUILT=1 its bundle (`services/<name>/dist/main.js`, what
 * the image and the whole-system benches run; `node scripts/build.mjs` makes it), else its source
 * through tsx, whose transform keeps function names (a property definition per named closure made).
 */
export function startService(name: string, env: Record<string, string>, nodeArgs: string[] = []): Child {
  if (!process.env.BENCH_BUILT) return startChild(path.join(ROOT, 'services', name, 'src/main.ts'), [], env, nodeArgs);
  const proc = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'services', name, 'dist/main.js')], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return childOf(proc);
}

/** Resolves with the port a static-server child prints. */
export function listeningPort(child: Child, timeoutMs = 30_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no LISTENING line: ${child.tail.join('\n')}`)), timeoutMs);
    createInterface({ input: child.proc.stdout! }).on('line', (line) => {
      const m = /^LISTENING (\d+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
}

export { freePort } from '@sched/testing';

/** Polls /readyz until 200; fails with the child's last output if it exits or takes too long. */
export async function waitReady(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) throw new Error(`process exited during start-up:\n${child.tail.join('\n')}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready within ${timeoutMs} ms:\n${child.tail.join('\n')}`);
}
