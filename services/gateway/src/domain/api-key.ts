import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_RANDOM_LENGTH = 32;
const KEY_PATTERN = /^sk_(live|test)_[0-9A-Za-z]{32}$/;

export type KeyMode = 'live' | 'test';

/** 32 base62 characters by rejection sampling, so every character is uniform (~190 bits). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** decisions.md §3: `sk_live_` (or `sk_test_`) + 32 random base62 characters. */
export function generateApiKey(mode: KeyMode): string {
  return `sk_${mode}_${randomBase62(KEY_RANDOM_LENGTH)}`;
}

export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** Keys are stored only as this SHA-256 hex digest. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time equality of two hex digests of the same length. */
export function digestsEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ab.length === bb.length && ab.length > 0 && timingSafeEqual(ab, bb);
}

/** The non-secret start of a key, shown in listings so people can tell keys apart. */
export function keyHint(key: string): string {
  return `${key.slice(0, 12)}…`;
}

/** Extracts the token of `Authorization: Bearer <token>`; null when absent or malformed. */
export function parseBearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return m ? m[1]! : null;
}
