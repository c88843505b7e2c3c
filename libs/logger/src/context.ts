import { AsyncLocalStorage } from 'node:async_hooks';

/** Fields that follow a unit of work (an HTTP request or a message) into every log line and outgoing call. */
export interface LogContext {
  request_id?: string;
  event_id?: string;
  workspace_id?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

export function runWithContext<T>(ctx: LogContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...ctx }, fn);
}

export function currentContext(): LogContext {
  return storage.getStore() ?? {};
}
