/** Keys whose values are secrets whatever they hold. */
const SECRET_KEY = /(pass(word)?|secret|token|authorization|api[_-]?key|credential|cookie|^key$|private)/i;

/** Secret-looking values wherever they appear in a string (API keys, webhook secrets, bearer tokens, URL passwords). */
const SECRET_VALUES: Array<[RegExp, string]> = [
  [/\bsk_(live|test)_[A-Za-z0-9]{8,}/g, 'sk_$1_[REDACTED]'],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, 'whsec_[REDACTED]'],
  [/\bBearer\s+[A-Za-z0-9._~+/=-]+/gi, 'Bearer [REDACTED]'],
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^:/\s@]+:)[^@\s/]+@/gi, '$1[REDACTED]@'],
  [/(\/book\/i\/)[A-Za-z0-9_-]{8,}/g, '$1[REDACTED]'],
];

/**
 * Text every pattern above needs (each matches only where one of these is, case aside): a string
 * without any cannot change, and most logged strings (ids, routes, queue names) have none, so
 * they cost one scan instead of five.
 */
export const SECRET_HINTS = 'sk_|whsec_|bearer|:\\/\\/|\\/book\\/i\\/';
const MAY_HOLD_SECRET = new RegExp(SECRET_HINTS, 'i');

export const REDACTED = '[REDACTED]';

export function redactString(s: string): string {
  if (!MAY_HOLD_SECRET.test(s)) return s;
  let out = s;
  for (const [re, rep] of SECRET_VALUES) out = out.replace(re, rep);
  return out;
}

/** Whether a field of this name is a secret whatever it holds (its value is written as [REDACTED]). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Deep copy of a log payload with secret keys masked and secret-looking substrings scrubbed. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return '[Truncated]';
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    // The code (ECONNREFUSED, a SQLSTATE) and the cause (the driver's error a DrizzleQueryError wraps)
    // are what tell a bug from an outage; JSON drops them when absent.
    const { code } = value as { code?: unknown };
    return {
      name: value.name,
      message: redactString(value.message),
      code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
      stack: value.stack ? redactString(value.stack) : undefined,
      cause: value.cause === undefined ? undefined : redact(value.cause, depth + 1),
    };
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = isSecretKey(k) && v !== null && v !== undefined && typeof v !== 'boolean' ? REDACTED : redact(v, depth + 1);
  }
  return out;
}
