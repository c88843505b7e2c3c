/**
 * Group commit, the scheduling half: writes that arrive while earlier batches of their lane are in the
 * database wait and then go out together as the lane's next batch. There is no timer: with nothing in
 * flight a write goes out alone at once, so a quiet service answers as fast as without batching, and under
 * load the batch grows with the load. What one batch does in the database is the caller's `run`.
 *
 * Used by booking (creates: one lane, several batches in flight, one transaction per batch) and by the
 * gateway (rate-limit counters: one lane per key and window, one upsert of +n in flight per lane).
 */
export interface GroupCommitOptions<T, R> {
  /**
   * Runs one batch (all of one lane); answers one result per item, in order. A throw fails the whole batch
   * (see retryAlone). Called synchronously from submit() when the lane has room.
   */
  run(items: T[]): Promise<R[]>;
  /** Batches of one lane running at once (e.g. each holds one database connection). */
  maxInFlight: number;
  /** Items per batch (Infinity: no bound). */
  maxBatch: number;
  /** Items of different lanes never share a batch, and each lane has its own maxInFlight. Default: one lane. */
  laneOf?(item: T): string;
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

export interface GroupCommit<T, R> {
  submit(item: T): Promise<R>;
  /**
   * Batches run (re-runs of single items included) and items submitted so far; batches in flight and items
   * queued now; lanes with a batch in flight or items queued.
   */
  stats(): { batches: number; items: number; inFlight: number; queued: number; lanes: number };
}

interface Pending<T, R> {
  item: T;
  resolve(value: R): void;
  reject(err: unknown): void;
}

interface Lane<T, R> {
  queue: Pending<T, R>[];
  inFlight: number;
}

export function createGroupCommit<T, R>(opts: GroupCommitOptions<T, R>): GroupCommit<T, R> {
  if (opts.maxInFlight < 1 || opts.maxBatch < 1) throw new Error('maxInFlight and maxBatch must be at least 1');
  const lanes = new Map<string, Lane<T, R>>();
  let batches = 0;
  let items = 0;

  const take = (queue: Pending<T, R>[]): Pending<T, R>[] => {
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

  /** Runs a batch; answers how to settle its items (done after the lane moved on, see pump). */
  const attempt = async (batch: Pending<T, R>[]): Promise<() => void> => {
    batches += 1;
    try {
      const results = await opts.run(batch.map((p) => p.item));
      if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} answered ${results.length} results`);
      return () => batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (err) {
      if (batch.length > 1 && opts.retryAlone?.(err)) {
        const settlers = await Promise.all(batch.map((p) => attempt([p])));
        return () => settlers.forEach((settle) => settle());
      }
      return () => batch.forEach((p) => p.reject(err));
    }
  };

  const pump = (name: string, lane: Lane<T, R>): void => {
    while (lane.inFlight < opts.maxInFlight && lane.queue.length > 0) {
      const batch = take(lane.queue);
      lane.inFlight += 1;
      void attempt(batch).then((settle) => {
        // The lane moves on (its next batch goes out) before the callers hear their answers.
        lane.inFlight -= 1;
        pump(name, lane);
        if (lane.inFlight === 0 && lane.queue.length === 0) lanes.delete(name);
        settle();
      });
    }
  };

  return {
    submit: (item) =>
      new Promise<R>((resolve, reject) => {
        items += 1;
        const name = opts.laneOf?.(item) ?? '';
        let lane = lanes.get(name);
        if (!lane) lanes.set(name, (lane = { queue: [], inFlight: 0 }));
        lane.queue.push({ item, resolve, reject });
        pump(name, lane);
      }),
    stats: () => {
      let inFlight = 0;
      let queued = 0;
      for (const lane of lanes.values()) {
        inFlight += lane.inFlight;
        queued += lane.queue.length;
      }
      return { batches, items, inFlight, queued, lanes: lanes.size };
    },
  };
}
