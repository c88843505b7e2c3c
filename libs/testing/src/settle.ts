import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The one fixed wait of the test suite, for when no signal exists (conventions.md 15): prefer
 * `waitFor` on an ack, a NOTIFY, a row, a metric or a log line, or a marker sent after the thing
 * that must have no effect. `why` says what there is to wait for and why nothing announces it
 * (e.g. "the expiry is wall-clock time"); it is not used at run time, it is there for the reader,
 * and a wait without a reason is refused.
 */
export async function settle(ms: number, why: string): Promise<void> {
  if (why.trim() === '') throw new Error('settle: say why no signal can be waited for instead');
  if (ms > 0) await sleep(ms);
}
