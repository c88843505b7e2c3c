import winston from 'winston';
import { currentContext } from './context';
import { redact, redactString } from './redact';

export { runWithContext, currentContext, type LogContext } from './context';
export { redact, redactString, REDACTED } from './redact';

export type Logger = winston.Logger;

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read what was logged. */
  stream?: NodeJS.WritableStream;
}

const LEVEL = Symbol.for('level');
const MESSAGE = Symbol.for('message');

/** Adds request_id / event_id of the current unit of work and scrubs secrets from every field. */
const contextAndRedaction = winston.format((info) => {
  const ctx = currentContext();
  const cleaned = redact({ ...ctx, ...info }) as Record<string, unknown>;
  const out = info as Record<string | symbol, unknown>;
  for (const k of Object.keys(out)) delete out[k];
  Object.assign(out, cleaned);
  out[LEVEL] = info[LEVEL as unknown as string];
  if (typeof out.message === 'string') out.message = redactString(out.message);
  return info;
});

/** JSON logger: one object per line with time, level, service, message, request_id/event_id, secrets redacted. */
export function createLogger(opts: LoggerOptions): Logger {
  const transport = opts.stream
    ? new winston.transports.Stream({ stream: opts.stream })
    : new winston.transports.Console({ stderrLevels: [] });
  // winston runs the whole format chain (copying, redaction, JSON) before its transports look at the
  // level: a line below the logger's level is dropped first, so an unprinted debug line costs nothing.
  const belowLevel = winston.format((info) => (logger.isLevelEnabled(String(info[LEVEL as unknown as string] ?? info.level)) ? info : false));
  const logger: Logger = winston.createLogger({
    level: opts.level ?? 'info',
    defaultMeta: { service: opts.service },
    format: winston.format.combine(belowLevel(), winston.format.errors({ stack: true }), winston.format.timestamp(), contextAndRedaction(), winston.format.json()),
    transports: [transport],
  });
  return logger;
}

export { MESSAGE };
