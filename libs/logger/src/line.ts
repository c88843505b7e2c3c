import { isSecretKey, REDACTED, redact, redactString, SECRET_HINTS } from './redact';

/**
 * The JSON text of one log line, built in one walk over its fields: what `redact()` of the line's
 * fields (the context's under the call's) serialised with its keys sorted (safe-stable-stringify, as
 * winston's json format did) gives, byte for byte, without the deep copy in between, the copy's key
 * deletions and the second walk. test/line-format.test.ts holds the two to the same bytes.
 *
 * What this walk does not take on (a key named `toJSON` or `__proto__`, an Error whose name, message
 * or stack is not a string) goes the general way: `redact()` then the `general` serialiser.
 */

/** Deeper values become '[Truncated]', as redact() makes them. */
const MAX_DEPTH = 8;
const TRUNCATED = '"[Truncated]"';
const REDACTED_TEXT = JSON.stringify(REDACTED);

/** Thrown inside the walk when a value needs the general way; caught once per line. */
const GENERAL = Symbol('logger.general');

interface Key {
  /** The key as JSON text, with its colon. */
  text: string;
  secret: boolean;
}

/** Keys are few (they are written in code; data keyed by names is rare): each is quoted and tested once. */
const keys = new Map<string, Key>();
const KEYS_KEPT = 4096;

function keyOf(k: string): Key {
  let key = keys.get(k);
  if (key === undefined) {
    if (k === 'toJSON' || k === '__proto__') throw GENERAL;
    key = { text: `${JSON.stringify(k)}:`, secret: isSecretKey(k) };
    if (keys.size < KEYS_KEPT) keys.set(k, key);
  }
  return key;
}

/** What redact() keeps of a value under a secret key: only null, undefined and booleans are not secrets. */
function field(key: Key, v: unknown, depth: number): string | undefined {
  return key.secret && v !== null && v !== undefined && typeof v !== 'boolean' ? REDACTED_TEXT : text(v, depth);
}

/**
 * A string that needs neither escaping in JSON nor a look for secrets (the prefilter of redactString)
 * is written as it is, between quotes: most logged strings (ids, routes, names).
 */
const NEEDS_WORK = new RegExp(`["\\\\\\u0000-\\u001f\\ud800-\\udfff]|${SECRET_HINTS}`, 'i');

function stringText(s: string): string {
  return NEEDS_WORK.test(s) ? JSON.stringify(redactString(s)) : `"${s}"`;
}

/** JSON text of redact(value, depth); undefined where JSON leaves a value out (undefined, functions, symbols). */
function text(value: unknown, depth: number): string | undefined {
  if (depth > MAX_DEPTH) return TRUNCATED;
  switch (typeof value) {
    case 'string':
      return stringText(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      // winston's json format writes a bigint as a string of its digits.
      return `"${value.toString()}"`;
    case 'object':
      if (value === null) return 'null';
      if (value instanceof Error) return errorText(value, depth);
      if (Array.isArray(value)) return arrayText(value, depth);
      return objectText(value as Record<string, unknown>, depth);
    default:
      return undefined;
  }
}

function objectText(obj: Record<string, unknown>, depth: number): string {
  const names = Object.keys(obj);
  sortNames(names);
  let out = '';
  for (const k of names) {
    const key = keyOf(k);
    const t = field(key, obj[k], depth + 1);
    if (t !== undefined) out += (out === '' ? '{' : ',') + key.text + t;
  }
  return out === '' ? '{}' : `${out}}`;
}

function arrayText(arr: unknown[], depth: number): string {
  if (arr.length === 0) return '[]';
  let out = '[';
  for (let i = 0; i < arr.length; i++) {
    if (i > 0) out += ',';
    // redact() maps arrays: a hole stays a hole (null in JSON), even where a value would be truncated.
    const t = depth + 1 > MAX_DEPTH && !(i in arr) ? undefined : text(arr[i], depth + 1);
    out += t === undefined ? 'null' : t;
  }
  return `${out}]`;
}

/** redact()'s copy of an Error, { cause, code, message, name, stack }, in that (sorted) order. */
function errorText(err: Error, depth: number): string {
  const { name, message, stack } = err;
  const { code } = err as { code?: unknown };
  if (typeof name !== 'string' || typeof message !== 'string' || (stack && typeof stack !== 'string')) throw GENERAL;
  let out = '{';
  if (err.cause !== undefined) {
    const t = text(err.cause, depth + 1);
    if (t !== undefined) out += `"cause":${t},`;
  }
  if (typeof code === 'string') out += `"code":${JSON.stringify(code)},`;
  else if (typeof code === 'number') out += `"code":${Number.isFinite(code) ? String(code) : 'null'},`;
  out += `"message":${JSON.stringify(redactString(message))},"name":${JSON.stringify(name)}`;
  if (stack) out += `,"stack":${JSON.stringify(redactString(stack))}`;
  return `${out}}`;
}

const { propertyIsEnumerable } = Object.prototype;

/**
 * Sorts names as Array.prototype.sort() does (by UTF-16 code units): an insertion sort, as
 * safe-stable-stringify sorts keys, about twice as fast as sort() for the dozen names of a line.
 */
function sortNames(names: string[]): void {
  if (names.length > 64) {
    names.sort();
    return;
  }
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let at = i;
    while (at > 0 && names[at - 1]! > name) {
      names[at] = names[at - 1]!;
      at--;
    }
    names[at] = name;
  }
}

/**
 * The line of `info` (winston's info object: the call's message and fields, level, service, timestamp)
 * in the context `ctx` (only its string keys; the call's fields win). `general` serialises an object
 * as winston's json format does, for the lines this walk leaves to it.
 */
export function lineText(info: Record<string, unknown>, ctx: object, general: (fields: Record<string, unknown>) => string): string {
  const names = Object.keys(info);
  for (const k of Object.keys(ctx)) if (!propertyIsEnumerable.call(info, k)) names.push(k);
  sortNames(names);
  try {
    let out = '';
    for (const k of names) {
      const key = keyOf(k);
      const v = propertyIsEnumerable.call(info, k) ? info[k] : (ctx as Record<string, unknown>)[k];
      let t: string | undefined;
      // The message is scrubbed twice, as the format chain did (the second pass changes nothing unless the first did).
      if (k === 'message' && typeof v === 'string') {
        const once = redactString(v);
        t = JSON.stringify(once === v ? once : redactString(once));
      } else t = field(key, v, 1);
      if (t !== undefined) out += (out === '' ? '{' : ',') + key.text + t;
    }
    return out === '' ? '{}' : `${out}}`;
  } catch (err) {
    if (err !== GENERAL) throw err;
    const cleaned = redact({ ...ctx, ...info }) as Record<string, unknown>;
    if (typeof cleaned.message === 'string') cleaned.message = redactString(cleaned.message);
    return general(cleaned);
  }
}
