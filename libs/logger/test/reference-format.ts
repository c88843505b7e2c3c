/**
 * The line format as it was built before issue 18's cut (commit 75e4213): winston's format chain
 * errors → timestamp → context and redaction (a deep copy) → json (safe-stable-stringify, keys sorted),
 * with redact.ts's rules copied here, frozen. The tests write the same calls through it and through
 * createLogger and require the same bytes, so a faster line is proven to be the same line.
 */
import winston from 'winston';
import { currentContext } from '../src/context';

const SECRET_KEY = /(pass(word)?|secret|token|authorization|api[_-]?key|credential|cookie|^key$|private)/i;
const SECRET_VALUES: Array<[RegExp, string]> = [
  [/\bsk_(live|test)_[A-Za-z0-9]{8,}/g, 'sk_$1_[REDACTED]'],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, 'whsec_[REDACTED]'],
  [/\bBearer\s+[A-Za-z0-9._~+/=-]+/gi, 'Bearer [REDACTED]'],
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^:/\s@]+:)[^@\s/]+@/gi, '$1[REDACTED]@'],
  [/(\/book\/i\/)[A-Za-z0-9_-]{8,}/g, '$1[REDACTED]'],
];

export function referenceRedactString(s: string): string {
  let out = s;
  for (const [re, rep] of SECRET_VALUES) out = out.replace(re, rep);
  return out;
}

export function referenceRedact(value: unknown, depth = 0): unknown {
  if (depth > 8) return '[Truncated]';
  if (typeof value === 'string') return referenceRedactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    const { code } = value as { code?: unknown };
    return {
      name: value.name,
      message: referenceRedactString(value.message),
      code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
      stack: value.stack ? referenceRedactString(value.stack) : undefined,
      cause: value.cause === undefined ? undefined : referenceRedact(value.cause, depth + 1),
    };
  }
  if (Array.isArray(value)) return value.map((v) => referenceRedact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_KEY.test(k) && v !== null && v !== undefined && typeof v !== 'boolean' ? '[REDACTED]' : referenceRedact(v, depth + 1);
  }
  return out;
}

const LEVEL = Symbol.for('level');

const contextAndRedaction = winston.format((info) => {
  const ctx = currentContext();
  const cleaned = referenceRedact({ ...ctx, ...info }) as Record<string, unknown>;
  const out = info as Record<string | symbol, unknown>;
  for (const k of Object.keys(out)) delete out[k];
  Object.assign(out, cleaned);
  out[LEVEL] = info[LEVEL as unknown as string];
  if (typeof out.message === 'string') out.message = referenceRedactString(out.message);
  return info;
});

/** createLogger as it was, writing to `stream`. */
export function createReferenceLogger(opts: { service: string; level?: string; stream: NodeJS.WritableStream }): winston.Logger {
  const belowLevel = winston.format((info) => (logger.isLevelEnabled(String(info[LEVEL as unknown as string] ?? info.level)) ? info : false));
  const logger: winston.Logger = winston.createLogger({
    level: opts.level ?? 'info',
    defaultMeta: { service: opts.service },
    format: winston.format.combine(belowLevel(), winston.format.errors({ stack: true }), winston.format.timestamp(), contextAndRedaction(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: opts.stream })],
  });
  return logger;
}
