import { createHmac, timingSafeEqual } from 'node:crypto';
import { CURSOR_MAX_LENGTH, DomainError } from '@sched/contracts';

/**
 * Keyset cursors for the list endpoints (decisions.md §5): opaque, tamper-evident, bound to the list
 * endpoint and the filters they were made with. The position (the last row's sort key) travels in
 * the cursor; the endpoint and filters do not, they are part of what the MAC covers, so a cursor
 * replayed with other filters or on another list fails verification.
 */
export interface CursorCodec {
  encode(endpoint: string, filters: Record<string, unknown>, position: unknown): string;
  /** The position, or 400 invalid_request naming `cursor` when the cursor fails any check. */
  decode<T = unknown>(endpoint: string, filters: Record<string, unknown>, cursor: string): T;
}

function canonical(value: unknown): string {
  if (value === undefined) return 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const invalid = () => new DomainError('invalid_request', { message: 'The cursor is not valid for this list.', details: [{ field: 'cursor', issue: 'invalid_format' }] });

export function createCursorCodec(secret: string): CursorCodec {
  if (secret.length < 16) throw new Error('cursor secret must be at least 16 characters');
  const mac = (endpoint: string, filters: Record<string, unknown>, payload: string) =>
    createHmac('sha256', secret).update(`v1\n${endpoint}\n${canonical(filters)}\n${payload}`).digest();

  return {
    encode(endpoint, filters, position) {
      const payload = Buffer.from(canonical(position), 'utf8').toString('base64url');
      return `${payload}.${mac(endpoint, filters, payload).subarray(0, 16).toString('base64url')}`;
    },
    decode<T>(endpoint: string, filters: Record<string, unknown>, cursor: string): T {
      if (cursor.length === 0 || cursor.length > CURSOR_MAX_LENGTH) throw invalid();
      const [payload, tag, extra] = cursor.split('.');
      if (!payload || !tag || extra !== undefined) throw invalid();
      const expected = mac(endpoint, filters, payload).subarray(0, 16);
      const given = Buffer.from(tag, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      try {
        return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as T;
      } catch {
        throw invalid();
      }
    },
  };
}

/** One page of a keyset query: fetch limit + 1 rows; the extra row only says whether another page exists. */
export function toPage<Row, P>(rows: Row[], limit: number, positionOf: (row: Row) => P): { items: Row[]; next: P | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last !== undefined ? positionOf(last) : null };
}
