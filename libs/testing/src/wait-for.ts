import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls fn until it returns something other than false, null or undefined, and resolves
 * with that value. A throw counts as "not yet". For assertion-style checks return true
 * after the expect calls. On timeout it rejects with the last error, so the failure says
 * what was still wrong.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, opts: WaitForOptions = {}): Promise<NonNullable<Exclude<T, false>>> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  let lastValue: unknown;
  for (;;) {
    try {
      lastValue = await fn();
      lastError = undefined;
      if (lastValue !== false && lastValue !== null && lastValue !== undefined) return lastValue as NonNullable<Exclude<T, false>>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) break;
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
  const reason = lastError instanceof Error ? lastError.message : lastError !== undefined ? String(lastError) : `last value: ${String(lastValue)}`;
  throw new Error(`waitFor timed out after ${timeoutMs}ms; ${reason}`, { cause: lastError });
}
