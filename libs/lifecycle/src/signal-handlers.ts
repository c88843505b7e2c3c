import type { Logger } from '@sched/logger';
import type { Lifecycle } from './lifecycle';

/** The part of `process` the handlers use; tests pass an EventEmitter. */
export interface ProcessEvents {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
}

export interface SignalHandlerOptions {
  logger: Logger;
  /** Defaults to process.exit; tests pass a spy so they never end the test process. */
  exit?: (code: number) => void;
  /** Defaults to process. */
  proc?: ProcessEvents;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * SIGTERM/SIGINT → stop() then exit 0 (1 if a closer threw or the stop timed out). A crash
 * (unhandledRejection/uncaughtException) is logged, still drains, and exits 1: the state is suspect.
 * A second signal while stopping exits 1 at once, so an operator's second Ctrl-C is never ignored.
 * Returns a function that removes the handlers.
 */
export function installSignalHandlers(lifecycle: Lifecycle, opts: SignalHandlerOptions): () => void {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const proc: ProcessEvents = opts.proc ?? (process as unknown as ProcessEvents);

  // Shared, so a crash during a signal-started stop still turns the exit code to 1.
  let crashed = false;
  const stopThenExit = (reason: string) => {
    lifecycle
      .stop(reason)
      .then((result) => exit(result.ok && !crashed ? 0 : 1))
      .catch((err: unknown) => {
        opts.logger.error('stop failed', { err });
        exit(1);
      });
  };

  const onSignal = (signal: unknown) => {
    if (lifecycle.stopping) {
      opts.logger.warn('second signal while stopping; exiting now', { signal });
      exit(1);
      return;
    }
    opts.logger.info('signal received', { signal });
    stopThenExit(String(signal));
  };

  const onCrash = (kind: string) => (err: unknown) => {
    crashed = true;
    opts.logger.error(kind, { err });
    stopThenExit(kind);
  };

  const listeners: Array<[string, (...args: unknown[]) => void]> = [
    ...SIGNALS.map((s): [string, (...args: unknown[]) => void] => [s, onSignal]),
    ['unhandledRejection', onCrash('unhandledRejection')],
    ['uncaughtException', onCrash('uncaughtException')],
  ];
  for (const [event, listener] of listeners) proc.on(event, listener);
  return () => {
    for (const [event, listener] of listeners) proc.off(event, listener);
  };
}
