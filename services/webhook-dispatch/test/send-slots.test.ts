import { SendSlots } from '../src/delivery/send-slots';

/** The delivery worker's room: the replica's in-flight cap and its exact per-endpoint share. */
function deferred(): { promise: Promise<boolean>; resolve: (more: boolean) => void } {
  let resolve!: (more: boolean) => void;
  const promise = new Promise<boolean>((r) => (resolve = r));
  return { promise, resolve };
}

describe('send slots', () => {
  it('holds at most the per-endpoint cap for one endpoint, independently of the others', () => {
    const slots = new SendSlots({ maxInFlight: 10, perEndpoint: 2 });
    expect(slots.hold('a')).toBe(true);
    expect(slots.hold('a')).toBe(true);
    expect(slots.hold('a')).toBe(false);
    expect(slots.hold('b')).toBe(true);
    slots.unhold('a');
    expect(slots.hold('a')).toBe(true);
  });

  it('counts attempts running and slots promised to ingest statements against the room', () => {
    const slots = new SendSlots({ maxInFlight: 3, perEndpoint: 3 });
    slots.reserve(2);
    expect(slots.free()).toBe(1);
    expect(slots.full()).toBe(false);
    slots.hold('a');
    const attempt = deferred();
    slots.run('a', attempt.promise, () => undefined);
    expect(slots.free()).toBe(0);
    expect(slots.running).toBe(1);
    slots.unreserve(2);
    expect(slots.free()).toBe(2);
  });

  it('frees the slot and the endpoint share when an attempt ends, and passes on whether the endpoint has more', async () => {
    const slots = new SendSlots({ maxInFlight: 1, perEndpoint: 1 });
    expect(slots.hold('a')).toBe(true);
    const attempt = deferred();
    const ended = new Promise<boolean>((resolve) => slots.run('a', attempt.promise, resolve));
    expect(slots.full()).toBe(true);
    expect(slots.hold('a')).toBe(false);
    attempt.resolve(true);
    await expect(ended).resolves.toBe(true);
    expect(slots.full()).toBe(false);
    expect(slots.running).toBe(0);
    expect(slots.hold('a')).toBe(true);
  });

  it('drains: waits for every attempt running, including one started while waiting', async () => {
    const slots = new SendSlots({ maxInFlight: 5, perEndpoint: 5 });
    const first = deferred();
    const second = deferred();
    slots.hold('a');
    let firstEnded!: () => void;
    const startedSecond = new Promise<void>((resolve) => (firstEnded = resolve));
    slots.run('a', first.promise, () => {
      // An attempt that ends can start another (a finished attempt wakes a round).
      slots.hold('a');
      slots.run('a', second.promise, () => undefined);
      firstEnded();
    });
    let drained = false;
    const drain = slots.drain().then(() => (drained = true));
    first.resolve(false);
    await startedSecond;
    expect(slots.running).toBe(1);
    expect(drained).toBe(false);
    second.resolve(false);
    await drain;
    expect(slots.running).toBe(0);
  });
});
