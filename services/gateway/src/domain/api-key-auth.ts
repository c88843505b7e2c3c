import { authenticate, type KeyRecord } from './authorize';
import { digestsEqual, hashApiKey, isWellFormedKey, parseBearer } from './api-key';
import type { TtlCache } from './key-cache';
import { DomainError } from '@sched/contracts';

export type StoredKey = KeyRecord & { keyHash: string };

/**
 * Authenticates an `Authorization` header: the key's record, or DomainError unauthenticated (401).
 * `cached` gives the same answer without waiting whenever no lookup is needed (the header is not a
 * well-formed key, or the cache holds the key's answer): the record, or the 401 thrown; undefined when
 * only the lookup can tell.
 */
export interface KeyAuthenticator {
  (authorization: string | undefined): Promise<KeyRecord>;
  cached(authorization: string | undefined): KeyRecord | undefined;
}

/**
 * Looks a key up by its hash, through a ≤5 s cache (misses are cached for a shorter time). Requests
 * of one key that miss the cache together share one lookup instead of one database read each (a
 * busy key's entry expiring would otherwise send every request in flight to the database).
 */
export function createKeyAuthenticator(deps: {
  findKeyByHash: (hash: string) => Promise<StoredKey | null>;
  cache: TtlCache<StoredKey | null>;
  negativeTtlMs?: number;
  now?: () => Date;
}): KeyAuthenticator {
  const now = deps.now ?? (() => new Date());
  const lookups = new Map<string, Promise<StoredKey | null>>();
  const lookup = (hash: string): Promise<StoredKey | null> => {
    let pending = lookups.get(hash);
    if (!pending) {
      pending = deps.findKeyByHash(hash).then(
        (row) => {
          lookups.delete(hash);
          // The index lookup found the row by hash; comparing digests in constant time keeps the check
          // itself timing-safe. Done once per lookup: the cache holds only rows that passed it, under
          // the hash they were compared with, so a cached answer needs no second comparison.
          const found = row && digestsEqual(row.keyHash, hash) ? row : null;
          deps.cache.set(hash, found, found ? undefined : (deps.negativeTtlMs ?? 1000));
          return found;
        },
        (err: unknown) => {
          lookups.delete(hash);
          throw err;
        },
      );
      lookups.set(hash, pending);
    }
    return pending;
  };
  /** The key's hash, or the 401 of a header that is not a well-formed key. */
  const hashOf = (authorization: string | undefined): string => {
    const token = parseBearer(authorization);
    if (!token || !isWellFormedKey(token)) throw new DomainError('unauthenticated');
    return hashApiKey(token);
  };
  /** Revoked or expired by now: 401. The row's digest was compared when it was looked up (lookup). */
  const check = (record: StoredKey | null): KeyRecord => authenticate(record, now());
  const authenticateHeader = async (authorization: string | undefined): Promise<KeyRecord> => {
    const hash = hashOf(authorization);
    const cached = deps.cache.get(hash);
    return check(cached === undefined ? await lookup(hash) : cached);
  };
  return Object.assign(authenticateHeader, {
    cached(authorization: string | undefined): KeyRecord | undefined {
      const cached = deps.cache.get(hashOf(authorization));
      return cached === undefined ? undefined : check(cached);
    },
  });
}
