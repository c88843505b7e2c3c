import type { Logger } from '@sched/logger';
import { installSignalHandlers, type ProcessEvents } from './signal-handlers';

export type Closer = () => unknown;

export interface StopResult {
  /** True when every closer finished without throwing, within the timeout. */
  ok: boolean;
  /** Closers that threw. */
  failed: string[];
  /** The closer still running when the timeout hit, then those never started. */
  hung: string[];
}

export interface LifecycleOptions {
  logger: Logger;
  /** Bound on the whole stop sequence (e.g. SHUTDOWN_TIMEOUT_MS), kept under the orchestrator's kill grace. */
  timeoutMs: number;
  /** Used by installSignalHandlers; defaults to process.exit. Injectable so tests never exit. */
  exit?: (code: number) => void;
  /** Where signals come from; defaults to process. */
  proc?: ProcessEvents;
}

export interface Lifecycle {
  /** Registers a closer; stop() runs them in reverse order, so register in start order. */
  onStop(name: string, fn: Closer): void;
  /** Runs the closers once; later calls return the same result. */
  stop(reason: string): Promise<StopResult>;
  readonly stopping: boolean;
  /** SIGTERM/SIGINT and crashes → stop() then exit; returns a function that removes the handlers. */
  installSignalHandlers(): () => void;
}

/** Closers run one at a time, so a count says which ones are done. */
interface Progress {
  finished: number;
  failed: string[];
}

async function runClosers(closers: ReadonlyArray<{ name: string; fn: Closer }>, progress: Progress, logger: Logger): Promise<void> {
  for (const { name, fn } of closers) {
    try {
      await fn();
      logger.info('stopped', { closer: name });
    } catch (err) {
      // One failing closer must not keep the others (e.g. the DB pool) from closing.
      progress.failed.push(name);
      logger.error('closer failed', { closer: name, err });
    }
    progress.finished += 1;
  }
}

/** Ordered, bounded, idempotent shutdown of what a process started (HTTP server, consumers, pools). */
export function createLifecycle(opts: LifecycleOptions): Lifecycle {
  const closers: Array<{ name: string; fn: Closer }> = [];
  let stopped: Promise<StopResult> | undefined;

  async function run(reason: string): Promise<StopResult> {
    opts.logger.info('stopping', { reason, closers: closers.length });
    const ordered = [...closers].reverse();
    const progress: Progress = { finished: 0, failed: [] };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>((resolve) => {
      timer = setTimeout(() => resolve(true), opts.timeoutMs);
    });
    const timedOutFirst = await Promise.race([runClosers(ordered, progress, opts.logger).then(() => false as const), timedOut]);
    clearTimeout(timer);
    const hung = timedOutFirst ? ordered.slice(progress.finished).map((c) => c.name) : [];
    if (timedOutFirst) opts.logger.error('stop timed out', { timeout_ms: opts.timeoutMs, hung });
    // Copies: a hung closer may still fail later, after the result was handed out.
    const result = { ok: !timedOutFirst && progress.failed.length === 0, failed: [...progress.failed], hung };
    opts.logger.info('stopped all', { reason, ok: result.ok });
    return result;
  }

  const lifecycle: Lifecycle = {
    onStop(name, fn) {
      if (stopped) {
        // Too late to be ordered with the rest; the process is about to exit anyway.
        opts.logger.warn('closer registered after stop began; not run', { closer: name });
        return;
      }
      closers.push({ name, fn });
    },
    stop(reason) {
      stopped ??= run(reason);
      return stopped;
    },
    get stopping() {
      return stopped !== undefined;
    },
    installSignalHandlers: () => installSignalHandlers(lifecycle, { logger: opts.logger, exit: opts.exit, proc: opts.proc }),
  };
  return lifecycle;
}
