import { createKeyAuthenticator, type StoredKey } from '../src/domain/api-key-auth';
import { generateApiKey, hashApiKey } from '../src/domain/api-key';
import { TtlCache } from '../src/domain/key-cache';

const key = generateApiKey('live');
const stored: StoredKey = {
  id: 'key_1',
  workspaceId: 'wsp_1',
  scopes: ['bookings:read'],
  expiresAt: null,
  revokedAt: null,
  rateLimit: null,
  keyHash: hashApiKey(key),
};

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('key authenticator', () => {
  it('shares one database lookup among the requests of a key that miss the cache together, then serves from the cache', async () => {
    const lookup = deferred<StoredKey | null>();
    const findKeyByHash = jest.fn((_hash: string) => lookup.promise);
    const auth = createKeyAuthenticator({ findKeyByHash, cache: new TtlCache(5000) });
    const results = Array.from({ length: 20 }, () => auth(`Bearer ${key}`));
    expect(findKeyByHash).toHaveBeenCalledTimes(1);
    lookup.resolve(stored);
    for (const r of await Promise.all(results)) expect(r.id).toBe('key_1');
    await auth(`Bearer ${key}`);
    expect(findKeyByHash).toHaveBeenCalledTimes(1);
  });

  it('fails every request of a failed shared lookup, and the next request looks again', async () => {
    const first = deferred<StoredKey | null>();
    const findKeyByHash = jest.fn<Promise<StoredKey | null>, [string]>().mockReturnValueOnce(first.promise).mockResolvedValueOnce(stored);
    const auth = createKeyAuthenticator({ findKeyByHash, cache: new TtlCache(5000) });
    const results = [auth(`Bearer ${key}`), auth(`Bearer ${key}`)];
    first.reject(new Error('db down'));
    for (const r of results) await expect(r).rejects.toThrow('db down');
    await expect(auth(`Bearer ${key}`)).resolves.toMatchObject({ id: 'key_1' });
    expect(findKeyByHash).toHaveBeenCalledTimes(2);
  });

  it('keeps different keys apart and still answers 401 for an unknown key (cached briefly)', async () => {
    const other = generateApiKey('live');
    const findKeyByHash = jest.fn(async (hash: string) => (hash === stored.keyHash ? stored : null));
    const auth = createKeyAuthenticator({ findKeyByHash, cache: new TtlCache(5000) });
    const [known, unknown] = await Promise.allSettled([auth(`Bearer ${key}`), auth(`Bearer ${other}`)]);
    expect(known).toMatchObject({ status: 'fulfilled', value: { id: 'key_1' } });
    expect(unknown).toMatchObject({ status: 'rejected', reason: { code: 'unauthenticated' } });
    expect(findKeyByHash).toHaveBeenCalledTimes(2);
    await expect(auth(`Bearer ${other}`)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(findKeyByHash).toHaveBeenCalledTimes(2);
  });
});

describe('key authenticator, the digest', () => {
  it('compares the row found with the hash once, at the lookup: a row of another hash is a 401 from the lookup and from the cache', async () => {
    const other = generateApiKey('live');
    // A store that answers a row whatever the hash (not one the index would find): the digests differ.
    const findKeyByHash = jest.fn(async (_hash: string) => ({ ...stored, keyHash: hashApiKey(other) }));
    const auth = createKeyAuthenticator({ findKeyByHash, cache: new TtlCache(5000) });
    await expect(auth(`Bearer ${key}`)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(() => auth.cached(`Bearer ${key}`)).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    await expect(auth(`Bearer ${key}`)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(findKeyByHash).toHaveBeenCalledTimes(1);
    // The key whose digest the row has is served by it.
    await expect(auth(`Bearer ${other}`)).resolves.toMatchObject({ id: 'key_1' });
  });
});

describe('key authenticator, at once (cached)', () => {
  it('answers from the cache without a lookup or a promise, and leaves a key it does not know to the lookup', async () => {
    const findKeyByHash = jest.fn(async (hash: string) => (hash === stored.keyHash ? stored : null));
    const auth = createKeyAuthenticator({ findKeyByHash, cache: new TtlCache(5000) });
    expect(auth.cached(`Bearer ${key}`)).toBeUndefined();
    expect(findKeyByHash).toHaveBeenCalledTimes(0);
    await auth(`Bearer ${key}`);
    expect(auth.cached(`Bearer ${key}`)).toMatchObject({ id: 'key_1', workspaceId: 'wsp_1' });
    expect(findKeyByHash).toHaveBeenCalledTimes(1);
  });

  it('refuses at once what the lookup would refuse: a malformed header, a key known to be unknown, a revoked or expired key', async () => {
    const other = generateApiKey('test');
    const revoked = generateApiKey('live');
    const expired = generateApiKey('live');
    const rows: Record<string, StoredKey> = {
      [hashApiKey(revoked)]: { ...stored, id: 'key_r', keyHash: hashApiKey(revoked), revokedAt: new Date('2020-01-01T00:00:00Z') },
      [hashApiKey(expired)]: { ...stored, id: 'key_e', keyHash: hashApiKey(expired), expiresAt: new Date('2020-01-01T00:00:00Z') },
    };
    const auth = createKeyAuthenticator({ findKeyByHash: async (hash) => rows[hash] ?? null, cache: new TtlCache(5000) });
    for (const header of [undefined, '', 'Bearer', 'Basic abc', `Bearer ${key}x`]) expect(() => auth.cached(header)).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    for (const k of [other, revoked, expired]) {
      await expect(auth(`Bearer ${k}`)).rejects.toMatchObject({ code: 'unauthenticated' });
      expect(() => auth.cached(`Bearer ${k}`)).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    }
  });
});
