import type { MessagePropertyHeaders } from 'amqplib';
import { redactString } from '@sched/logger';

/** Headers this library reads and writes on retried and dead-lettered messages. */
export const HEADERS = {
  /** Failed handler attempts so far. */
  attempts: 'x-attempts',
  /** Why the last attempt failed: the error message only, redacted and truncated. */
  lastError: 'x-last-error',
  firstFailedAt: 'x-first-failed-at',
  /** Retries and replays travel through the default exchange, which replaces the routing key. */
  originalRoutingKey: 'x-original-routing-key',
  replays: 'x-replays',
} as const;

const MAX_ERROR_LENGTH = 500;

// Error messages quote configuration and responses (`token=...`, `password: ...`); the
// logger's scrubbing knows secret formats, this catches secrets named by their key.
const KEYED_SECRET = /\b((?:access[_-]?|refresh[_-]?)?token|secret|pass(?:word)?|api[_-]?key|authorization|credentials?)(["']?\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&)}\]]+)/gi;

// Broker bookkeeping that must not follow a message into a fresh life (retry, replay):
// x-death grows on every dead-lettering and x-delivery-count belongs to one queue.
const BROKER_HEADERS = /^(x-death|x-first-death-.*|x-last-death-.*|x-delivery-count|BCC|CC)$/;

export function headersOf(headers: MessagePropertyHeaders | undefined): Record<string, unknown> {
  return { ...(headers ?? {}) };
}

export function withoutBrokerHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(headers)) if (!BROKER_HEADERS.test(k)) out[k] = v;
  return out;
}

export function numberHeader(headers: Record<string, unknown>, name: string): number {
  const v = headers[name];
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0;
}

export function stringHeader(headers: Record<string, unknown>, name: string): string | undefined {
  const v = headers[name];
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return undefined;
}

/**
 * The routing key the event was first published with: our header once a message has
 * travelled through the default exchange (retry, replay), else the oldest x-death entry
 * when the broker itself dead-lettered it, else the key it arrived with.
 */
export function originalRoutingKey(headers: Record<string, unknown>, arrivedWith: string): string {
  const ours = stringHeader(headers, HEADERS.originalRoutingKey);
  if (ours) return ours;
  const deaths = headers['x-death'];
  if (Array.isArray(deaths) && deaths.length > 0) {
    const keys = (deaths[deaths.length - 1] as Record<string, unknown> | undefined)?.['routing-keys'];
    if (Array.isArray(keys) && typeof keys[0] === 'string') return keys[0];
  }
  return arrivedWith;
}

/** One line for on-call: the message without stack or secrets, short enough for a header. */
export function describeError(err: unknown): string {
  const raw = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const clean = redactString(raw).replace(KEYED_SECRET, '$1$2[REDACTED]').replace(/\s+/g, ' ').trim();
  return clean.length > MAX_ERROR_LENGTH ? `${clean.slice(0, MAX_ERROR_LENGTH - 1)}…` : clean;
}
