import { waitFor } from '../src';

describe('waitFor', () => {
  it('keeps polling through throws, false and null, and resolves with the first real value', async () => {
    const answers: unknown[] = [new Error('not yet'), false, null, undefined, { id: 1 }];
    let calls = 0;
    const value = await waitFor(
      () => {
        const a = answers[calls++];
        if (a instanceof Error) throw a;
        return a as { id: number } | null | false | undefined;
      },
      { intervalMs: 1 },
    );
    expect(value).toEqual({ id: 1 });
    expect(calls).toBe(5);
  });

  it('works with async assertion-style checks that return true', async () => {
    let n = 0;
    await waitFor(
      async () => {
        n += 1;
        expect(n).toBeGreaterThan(2);
        return true;
      },
      { intervalMs: 1 },
    );
    expect(n).toBe(3);
  });

  it('rejects after the timeout with the last error, saying what was still wrong', async () => {
    const started = Date.now();
    await expect(
      waitFor(
        () => {
          throw new Error('row 42 still missing');
        },
        { timeoutMs: 100, intervalMs: 10 },
      ),
    ).rejects.toThrow('waitFor timed out after 100ms; row 42 still missing');
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
  });

  it('reports the last value when the check never throws but never succeeds', async () => {
    await expect(waitFor(() => false, { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow('last value: false');
  });
});
