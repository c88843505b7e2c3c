import { createGroupCommit } from '../src/group-commit';

/** A run whose batches stay open until the test lets them finish, so the test controls what overlaps. */
function gatedRun() {
  const batches: Array<{ items: string[]; finish(results?: string[]): void; fail(err: unknown): void }> = [];
  const run = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ items, finish: (results) => resolve(results ?? items.map((i) => `done:${i}`)), fail: reject });
    });
  return { batches, run };
}

const tick = () => new Promise((r) => setImmediate(r));

it('sends a lone call at once, and the calls that arrive meanwhile together as the next batch', async () => {
  const g = gatedRun();
  const b = createGroupCommit<string, string>({ run: g.run, maxInFlight: 1, maxBatch: 10 });
  const first = b.submit('a');
  expect(g.batches.map((x) => x.items)).toEqual([['a']]);
  const later = ['b', 'c', 'd'].map((i) => b.submit(i));
  await tick();
  expect(g.batches).toHaveLength(1); // one in flight at most
  g.batches[0]!.finish();
  expect(await first).toBe('done:a');
  await tick();
  expect(g.batches.map((x) => x.items)).toEqual([['a'], ['b', 'c', 'd']]);
  g.batches[1]!.finish();
  expect(await Promise.all(later)).toEqual(['done:b', 'done:c', 'done:d']);
  expect(b.stats()).toEqual({ batches: 2, items: 4, inFlight: 0, queued: 0, lanes: 0 });
});

it('runs up to maxInFlight batches at once and cuts batches at maxBatch', async () => {
  const g = gatedRun();
  const b = createGroupCommit<string, string>({ run: g.run, maxInFlight: 2, maxBatch: 2 });
  const all = ['a', 'b', 'c', 'd', 'e'].map((i) => b.submit(i));
  await tick();
  expect(g.batches.map((x) => x.items)).toEqual([['a'], ['b']]);
  g.batches[0]!.finish();
  await tick();
  expect(g.batches.map((x) => x.items)).toEqual([['a'], ['b'], ['c', 'd']]);
  g.batches[1]!.finish();
  await tick();
  expect(g.batches.map((x) => x.items)).toEqual([['a'], ['b'], ['c', 'd'], ['e']]);
  g.batches[2]!.finish();
  g.batches[3]!.finish();
  expect(await Promise.all(all)).toEqual(['a', 'b', 'c', 'd', 'e'].map((i) => `done:${i}`));
});

it('never puts two items with one key in a batch: the later one waits for a later batch, order kept', async () => {
  const g = gatedRun();
  const b = createGroupCommit<string, string>({ run: g.run, maxInFlight: 1, maxBatch: 10, keyOf: (i) => (i.startsWith('k') ? i.slice(0, 2) : undefined) });
  const blocker = b.submit('x');
  const rest = ['k1-a', 'y', 'k1-b', 'k2-a', 'k1-c', 'z'].map((i) => b.submit(i));
  g.batches[0]!.finish();
  await blocker;
  await tick();
  expect(g.batches[1]!.items).toEqual(['k1-a', 'y', 'k2-a', 'z']);
  g.batches[1]!.finish();
  await tick();
  expect(g.batches[2]!.items).toEqual(['k1-b']);
  g.batches[2]!.finish();
  await tick();
  expect(g.batches[3]!.items).toEqual(['k1-c']);
  g.batches[3]!.finish();
  expect(await Promise.all(rest)).toEqual(['k1-a', 'y', 'k1-b', 'k2-a', 'k1-c', 'z'].map((i) => `done:${i}`));
});

it('after a failed batch, retryAlone runs each item again alone, so only the item that fails by itself fails', async () => {
  const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
  const runs: string[][] = [];
  const b = createGroupCommit<string, string>({
    maxInFlight: 1,
    maxBatch: 10,
    retryAlone: (err) => (err as { code?: string }).code === '40P01',
    run: async (items) => {
      runs.push(items);
      if (items.length > 1) throw deadlock;
      if (items[0] === 'bad') throw new Error('bad alone');
      return items.map((i) => `done:${i}`);
    },
  });
  const blocker = b.submit('first');
  const results = await Promise.allSettled(['a', 'bad', 'c'].map((i) => b.submit(i)));
  await blocker;
  expect(runs).toEqual([['first'], ['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['done:a', 'bad alone', 'done:c']);
});

it('fails every item of a failed batch when the error is not one to retry, and a batch answering too few results', async () => {
  const b = createGroupCommit<string, string>({
    maxInFlight: 1,
    maxBatch: 10,
    retryAlone: () => false,
    run: async (items) => {
      if (items.includes('boom')) throw new Error('connection lost');
      return items.slice(1);
    },
  });
  const blocker = b.submit('boom');
  const short = ['a', 'b'].map((i) => b.submit(i));
  await expect(blocker).rejects.toThrow('connection lost');
  for (const p of short) await expect(p).rejects.toThrow('a batch of 2 answered 1 results');
  expect(() => createGroupCommit({ run: async () => [], maxInFlight: 0, maxBatch: 1 })).toThrow();
});

it('keeps lanes apart: each lane batches on its own, with its own in-flight bound', async () => {
  const g = gatedRun();
  const b = createGroupCommit<string, string>({ run: g.run, maxInFlight: 1, maxBatch: Infinity, laneOf: (i) => i.slice(0, 1) });
  const all = ['a1', 'b1', 'a2', 'a3', 'b2'].map((i) => b.submit(i));
  // One lone batch per lane went out at once; the rest wait behind their own lane.
  expect(g.batches.map((x) => x.items)).toEqual([['a1'], ['b1']]);
  expect(b.stats()).toMatchObject({ inFlight: 2, queued: 3, lanes: 2 });
  g.batches[1]!.finish();
  await tick();
  expect(g.batches.map((x) => x.items)).toEqual([['a1'], ['b1'], ['b2']]);
  g.batches[0]!.finish();
  await tick();
  expect(g.batches.map((x) => x.items)).toEqual([['a1'], ['b1'], ['b2'], ['a2', 'a3']]);
  g.batches[2]!.finish();
  g.batches[3]!.finish();
  expect(await Promise.all(all)).toEqual(['a1', 'b1', 'a2', 'a3', 'b2'].map((i) => `done:${i}`));
  expect(b.stats()).toMatchObject({ inFlight: 0, queued: 0, lanes: 0 });
});

it('lets the lane move on before its callers hear their answers, and calls run synchronously from submit', async () => {
  const g = gatedRun();
  const b = createGroupCommit<string, string>({ run: g.run, maxInFlight: 1, maxBatch: 10 });
  const first = b.submit('a');
  expect(g.batches).toHaveLength(1); // no tick, no timer
  g.batches[0]!.finish();
  await first;
  expect(b.stats()).toMatchObject({ inFlight: 0, lanes: 0 });
});
