import { EOL } from 'node:os';
import winston from 'winston';
import { currentContext } from './context';
import { lineText } from './line';

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

type Info = winston.Logform.TransformableInfo & Record<string | symbol, unknown>;

/** Milliseconds since the epoch of the last timestamp, and its text: lines written in the same millisecond share it. */
let stampedAt = -1;
let stamp = '';
function timestamp(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = new Date(now).toISOString();
  }
  return stamp;
}

/**
 * The whole line in one format: the level check, an Error given as the message (winston's errors
 * format), the timestamp, then the line's JSON text built in one walk that merges the log context,
 * redacts and serialises (line.ts). It replaces a chain of five formats that copied the fields, deleted
 * and re-added them, and serialised the copy with a serialiser configured anew for every line.
 */
function lineFormat(logger: () => winston.Logger): winston.Logform.Format {
  const errors = winston.format.errors({ stack: true });
  const json = winston.format.json();
  const general = (fields: Record<string, unknown>) => (json.transform(fields as Info, json.options) as Info)[MESSAGE] as string;
  return winston.format((given) => {
    // winston runs the format before its transports look at the level: a line below the logger's level
    // is dropped here first, so an unprinted debug line costs no formatting.
    if (!logger().isLevelEnabled(String(given[LEVEL as unknown as string] ?? given.level))) return false;
    let info = given as Info;
    if (info instanceof Error || info.message instanceof Error) info = errors.transform(info, errors.options) as Info;
    if (!info.timestamp) info.timestamp = timestamp();
    info[MESSAGE] = lineText(info, currentContext(), general);
    return info;
  })();
}

/**
 * winston-transport's TransportStream, the base of every transport, as winston exports it
 * (`winston.Transport`; its type declarations name it `transport`, which the module does not export).
 */
const TransportStream = (winston as unknown as { Transport: new () => winston.Logger['transports'][number] }).Transport;

/**
 * Writes each finished line with one write of its text and a newline, as winston's Console and Stream
 * transports do, before the call that logged it returns (a line logged just before process.exit is
 * not left in a queue), and without their setImmediate per line (their 'logged' event, which nothing
 * here listens to).
 */
class LineTransport extends TransportStream {
  constructor(private readonly out: NodeJS.WritableStream) {
    super();
  }

  override log(info: Info, next: () => void): void {
    this.out.write(`${info[MESSAGE] as string}${EOL}`);
    next();
  }
}

/** JSON logger: one object per line with time, level, service, message, request_id/event_id, secrets redacted. */
export function createLogger(opts: LoggerOptions): Logger {
  const logger: Logger = winston.createLogger({
    level: opts.level ?? 'info',
    defaultMeta: { service: opts.service },
    format: lineFormat(() => logger),
    transports: [new LineTransport(opts.stream ?? process.stdout)],
  });
  return logger;
}

export { MESSAGE };
