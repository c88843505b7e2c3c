import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so two bodies that differ only in key order (which no
 * JSON reader may rely on) have one fingerprint. `undefined` (no body) is written as `null`.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The path the scope and fingerprint use: no query string, no trailing slash (the same route either way). */
export function normalizePath(path: string): string {
  const bare = path.split('?')[0] ?? '';
  const trimmed = bare.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** decisions.md §4: the fingerprint is the method, the path and the canonical JSON of the body. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return sha256(`${method.toUpperCase()}\n${normalizePath(path)}\n${canonicalJson(body)}`);
}

/** Who a key belongs to: decisions.md §4 scopes a key to workspace + API key + method + path. */
export interface IdempotencyScope {
  workspaceId: string;
  /** The calling API key; undefined for a caller without one (then all such callers share the scope). */
  apiKeyId: string | undefined;
  method: string;
  path: string;
}

/** Primary key of the stored row. JSON array encoding keeps the parts unambiguous whatever they contain. */
export function scopedKeyId(scope: IdempotencyScope, key: string): string {
  return sha256(JSON.stringify([scope.workspaceId, scope.apiKeyId ?? '', scope.method.toUpperCase(), normalizePath(scope.path), key]));
}

/**
 * A signed 64-bit advisory lock key for the row, as text for a `::bigint` cast. The table name is mixed in
 * because advisory locks are per database and several services' schemas share one database.
 */
export function advisoryLockKey(qualifiedTable: string, id: string): string {
  const digest = createHash('sha256').update(`${qualifiedTable}\n${id}`, 'utf8').digest();
  return digest.readBigInt64BE(0).toString();
}
