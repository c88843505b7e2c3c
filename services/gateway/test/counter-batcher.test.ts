import { CounterBatcher, type AddRequests, type CounterFailure } from '../src/domain/counter-batcher';

const W1 = new Date('2030-01-01T00:00:00Z');
const W2 = new Date('2030-01-01T00:00:10Z');

/**
 * A fake counter store shared like Postgres (several batchers = several replicas): every upsert is
 * recorded and stays pending until the test settles it, so the test decides what is in flight.
 */
function fakeStore() {
  const totals = new Map<string, number>();
  const calls: Array<{ keyId: string; windowStart: Date; n: number; settle(): void; fail(err: unknown): void }> = [];
  const add: AddRequests = (keyId, windowStart, n) =>
    new Promise((resolve, reject) => {
      calls.push({
        keyId,
        windowStart,
        n,
        settle() {
          const k = `${keyId}@${windowStart.toISOString()}`;
          const total = (totals.get(k) ?? 0) + n;
          totals.set(k, total);
          resolve(total);
        },
        fail: reject,
      });
    });
  /** Settles the oldest unsettled upsert. */
  const settleNext = async () => {
    const call = calls.find((c) => !(c as { done?: boolean }).done)!;
    (call as { done?: boolean }).done = true;
    call.settle();
    await flush();
  };
  const failNext = async (err: unknown) => {
    const call = calls.find((c) => !(c as { done?: boolean }).done)!;
    (call as { done?: boolean }).done = true;
    call.fail(err);
    await flush();
  };
  return { add, calls, settleNext, failNext, totals };
}

const flush = () => new Promise((r) => setImmediate(r));

/** Collects outcomes in the order the promises settle. */
function track(promises: Array<Promise<number | CounterFailure>>) {
  const settled: Array<number | CounterFailure> = [];
  promises.forEach((p) => void p.then((o) => settled.push(o)));
  return settled;
}

describe('CounterBatcher (group commit of rate-limit counts)', () => {
  it('sends a lone request at once, as an upsert of 1, with no timer in between', async () => {
    jest.useFakeTimers();
    try {
      const add = jest.fn<Promise<number>, Parameters<AddRequests>>().mockResolvedValue(7);
      const batcher = new CounterBatcher(add);
      const result = batcher.count('key_1', W1);
      // Synchronously, before any timer or tick could run.
      expect(add).toHaveBeenCalledTimes(1);
      expect(add).toHaveBeenCalledWith('key_1', W1, 1);
      expect(jest.getTimerCount()).toBe(0);
      await expect(result).resolves.toBe(7);
      expect(batcher.inFlight).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('coalesces 50 concurrent requests of one key into 2 upserts, with exact counts in arrival order', async () => {
    const store = fakeStore();
    const batcher = new CounterBatcher(store.add);
    const results = Array.from({ length: 50 }, () => batcher.count('key_1', W1));
    const settled = track(results);
    // The first request went out alone; the other 49 wait for it.
    expect(store.calls.map((c) => c.n)).toEqual([1]);
    await store.settleNext();
    expect(store.calls.map((c) => c.n)).toEqual([1, 49]);
    await store.settleNext();
    expect(store.calls).toHaveLength(2);
    expect(await Promise.all(results)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(settled).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(store.totals.get(`key_1@${W1.toISOString()}`)).toBe(50);
    expect(batcher.inFlight).toBe(0);
  });

  it('keeps one upsert in flight per key: requests arriving meanwhile join the next batch, not the one in flight', async () => {
    const store = fakeStore();
    const batcher = new CounterBatcher(store.add);
    const first = [batcher.count('key_1', W1), batcher.count('key_1', W1), batcher.count('key_1', W1)];
    await store.settleNext(); // +1 done; +2 now in flight
    const late = [batcher.count('key_1', W1), batcher.count('key_1', W1)];
    expect(store.calls.map((c) => c.n)).toEqual([1, 2]);
    await store.settleNext(); // +2 done; the late ones go out as +2
    expect(store.calls.map((c) => c.n)).toEqual([1, 2, 2]);
    await store.settleNext();
    expect(await Promise.all([...first, ...late])).toEqual([1, 2, 3, 4, 5]);
  });

  it('stays exact when another replica counts the same key in between (total - n + i)', async () => {
    const store = fakeStore();
    const replicaA = new CounterBatcher(store.add);
    const replicaB = new CounterBatcher(store.add);
    const a = [replicaA.count('key_1', W1), replicaA.count('key_1', W1), replicaA.count('key_1', W1), replicaA.count('key_1', W1)];
    const b = [replicaB.count('key_1', W1), replicaB.count('key_1', W1), replicaB.count('key_1', W1)];
    // In flight: A +1, B +1. Settle B's first, then A's, then the batches behind them.
    store.calls.reverse();
    while (store.calls.some((c) => !(c as { done?: boolean }).done)) await store.settleNext();
    const countsA = await Promise.all(a);
    const countsB = await Promise.all(b);
    // Every request got a distinct position 1..7; each replica's are increasing in its arrival order.
    expect([...countsA, ...countsB].sort((x, y) => Number(x) - Number(y))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(countsA).toEqual([...countsA].sort((x, y) => Number(x) - Number(y)));
    expect(countsB).toEqual([...countsB].sort((x, y) => Number(x) - Number(y)));
    expect(store.calls.map((c) => c.n).sort()).toEqual([1, 1, 2, 3]);
  });

  it('fails open for the failed batch only, reported by exactly one of its requests; later batches count on', async () => {
    const store = fakeStore();
    const batcher = new CounterBatcher(store.add);
    const first = batcher.count('key_1', W1);
    const batch = [batcher.count('key_1', W1), batcher.count('key_1', W1), batcher.count('key_1', W1)];
    await store.settleNext(); // the lone first one counts
    const boom = new Error('connection terminated');
    const after = [batcher.count('key_1', W1), batcher.count('key_1', W1)]; // join the batch behind the failing one
    await store.failNext(boom);
    const failures = (await Promise.all(batch)) as CounterFailure[];
    expect(failures.map((f) => typeof f)).toEqual(['object', 'object', 'object']);
    expect(failures.every((f) => f.error === boom && f.batchSize === 3)).toBe(true);
    expect(failures.filter((f) => f.reportsBatch)).toHaveLength(1);
    expect(failures[0]!.reportsBatch).toBe(true);
    await store.settleNext();
    expect(await first).toBe(1);
    // The lost batch never reached the store, so the next one continues from 1.
    expect(await Promise.all(after)).toEqual([2, 3]);
    expect(batcher.inFlight).toBe(0);
  });

  it('treats an upsert function that throws synchronously as a failed batch', async () => {
    const batcher = new CounterBatcher(() => {
      throw new Error('pool is closed');
    });
    const outcome = (await batcher.count('key_1', W1)) as CounterFailure;
    expect(outcome).toMatchObject({ batchSize: 1, reportsBatch: true });
    expect((outcome.error as Error).message).toBe('pool is closed');
    expect(batcher.inFlight).toBe(0);
  });

  it('never puts different keys or different windows in one batch', async () => {
    const store = fakeStore();
    const batcher = new CounterBatcher(store.add);
    const pairs: Array<[string, Date]> = [
      ['key_1', W1],
      ['key_2', W1],
      ['key_1', W2],
      // A key id that would collide with another pair if the lane key were naively joined.
      [`${W1.getTime()}:key_1`, W2],
    ];
    const results = pairs.flatMap(([k, w]) => [batcher.count(k, w), batcher.count(k, w)]);
    // One lone upsert per pair went out at once.
    expect(store.calls.map((c) => [c.keyId, c.windowStart, c.n])).toEqual(pairs.map(([k, w]) => [k, w, 1]));
    expect(batcher.inFlight).toBe(4);
    for (let i = 0; i < 4; i++) await store.settleNext();
    expect(store.calls.slice(4).map((c) => [c.keyId, c.windowStart, c.n])).toEqual(pairs.map(([k, w]) => [k, w, 1]));
    for (let i = 0; i < 4; i++) await store.settleNext();
    expect(await Promise.all(results)).toEqual([1, 2, 1, 2, 1, 2, 1, 2]);
    expect(batcher.inFlight).toBe(0);
  });
});
