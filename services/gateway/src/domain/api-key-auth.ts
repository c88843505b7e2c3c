import { authenticate, type KeyRecord } from './authorize';
import { digestsEqual, hashApiKey, isWellFormedKey, parseBearer } from './api-key';
import type { TtlCache } from './key-cache';
import { DomainError } from '@sched/contracts';

export type StoredKey = KeyRecord & { keyHash: string };

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
}) {
  const now = deps.now ?? (() => new Date());
  const lookups = new Map<string, Promise<StoredKey | null>>();
  const lookup = (hash: string): Promise<StoredKey | null> => {
    let pending = lookups.get(hash);
    if (!pending) {
      pending = deps.findKeyByHash(hash).then(
        (found) => {
          lookups.delete(hash);
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
  return async function authenticateHeader(authorization: string | undefined): Promise<KeyRecord> {
    const token = parseBearer(authorization);
    if (!token || !isWellFormedKey(token)) throw new DomainError('unauthenticated');
    const hash = hashApiKey(token);
    let record = deps.cache.get(hash);
    if (record === undefined) record = await lookup(hash);
    // The index lookup found the row by hash; comparing digests in constant time keeps the check itself timing-safe.
    if (record && !digestsEqual(record.keyHash, hash)) record = null;
    return authenticate(record, now());
  };
}
