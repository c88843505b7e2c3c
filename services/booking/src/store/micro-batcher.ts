/**
 * Group commit, the scheduling half: calls that arrive while earlier batches are running wait and then go
 * out together as the next batch. There is no timer: with nothing in flight a call goes out alone at once,
 * so a quiet service answers as fast as without batching, and under load the batch grows with the load.
 */
export interface MicroBatcherOptions<T, R> {
  /** Runs one batch; answers one result per item, in order. A throw fails the whole batch (see retryAlone). */
  run(items: T[]): Promise<R[]>;
  /** Batches running at once (each holds one database connection). */
  maxInFlight: number;
  /** Items per batch. */
  maxBatch: number;
  /**
   * Items with the same key never share a batch (the later one waits for a later batch). For idempotency
   * keys: two requests with one key must see each other committed, never each other's uncommitted rows.
   */
  keyOf?(item: T): string | undefined;
  /**
   * After a batch of several items failed: true runs each of them again as a batch of one, so an error of
   * one (or one the batch as a whole met, such as a deadlock with another batch) fails only that item.
   */
  retryAlone?(err: unknown): boolean;
}

export interface MicroBatcher<T, R> {
  submit(item: T): Promise<R>;
  /** Batches run (re-runs of single items included) and items submitted so far. */
  stats(): { batches: number; items: number; inFlight: number; queued: number };
}

interface Pending<T, R> {
  item: T;
  resolve(value: R): void;
  reject(err: unknown): void;
}

export function createMicroBatcher<T, R>(opts: MicroBatcherOptions<T, R>): MicroBatcher<T, R> {
  if (opts.maxInFlight < 1 || opts.maxBatch < 1) throw new Error('maxInFlight and maxBatch must be at least 1');
  const queue: Pending<T, R>[] = [];
  let inFlight = 0;
  let batches = 0;
  let items = 0;

  const take = (): Pending<T, R>[] => {
    if (!opts.keyOf) return queue.splice(0, opts.maxBatch);
    const batch: Pending<T, R>[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < queue.length && batch.length < opts.maxBatch; ) {
      const key = opts.keyOf(queue[i]!.item);
      if (key !== undefined && keys.has(key)) {
        i += 1; // stays queued, in order, for a later batch
        continue;
      }
      if (key !== undefined) keys.add(key);
      batch.push(queue.splice(i, 1)[0]!);
    }
    return batch;
  };

  const runBatch = async (batch: Pending<T, R>[]): Promise<void> => {
    batches += 1;
    try {
      const results = await opts.run(batch.map((p) => p.item));
      if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} answered ${results.length} results`);
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (err) {
      if (batch.length > 1 && opts.retryAlone?.(err)) {
        await Promise.all(batch.map((p) => runBatch([p])));
      } else {
        for (const p of batch) p.reject(err);
      }
    }
  };

  const pump = (): void => {
    while (inFlight < opts.maxInFlight && queue.length > 0) {
      const batch = take();
      inFlight += 1;
      void runBatch(batch).finally(() => {
        inFlight -= 1;
        pump();
      });
    }
  };

  return {
    submit: (item) =>
      new Promise<R>((resolve, reject) => {
        items += 1;
        queue.push({ item, resolve, reject });
        pump();
      }),
    stats: () => ({ batches, items, inFlight, queued: queue.length }),
  };
}
