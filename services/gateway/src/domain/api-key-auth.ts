import { authenticate, type KeyRecord } from './authorize';
import { digestsEqual, hashApiKey, isWellFormedKey, parseBearer } from './api-key';
import type { TtlCache } from './key-cache';
import { DomainError } from '@sched/contracts';

export type StoredKey = KeyRecord & { keyHash: string };

/** Looks a key up by its hash, through a ≤5 s cache (misses are cached for a shorter time). */
export function createKeyAuthenticator(deps: {
  findKeyByHash: (hash: string) => Promise<StoredKey | null>;
  cache: TtlCache<StoredKey | null>;
  negativeTtlMs?: number;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  return async function authenticateHeader(authorization: string | undefined): Promise<KeyRecord> {
    const token = parseBearer(authorization);
    if (!token || !isWellFormedKey(token)) throw new DomainError('unauthenticated');
    const hash = hashApiKey(token);
    let record = deps.cache.get(hash);
    if (record === undefined) {
      record = await deps.findKeyByHash(hash);
      deps.cache.set(hash, record, record ? undefined : (deps.negativeTtlMs ?? 1000));
    }
    // The index lookup found the row by hash; comparing digests in constant time keeps the check itself timing-safe.
    if (record && !digestsEqual(record.keyHash, hash)) record = null;
    return authenticate(record, now());
  };
}
