import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { createLogger } from '@sched/logger';
import { createLifecycle, type LifecycleOptions } from '../src';

function setup(overrides: Partial<LifecycleOptions> = {}) {
  const stream = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  stream.on('data', (chunk: Buffer) => {
    for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  let exited!: (code: number) => void;
  const exitCalled = new Promise<number>((r) => (exited = r));
  const exit = jest.fn<void, [number]>((code) => exited(code));
  const proc = new EventEmitter();
  const logger = createLogger({ service: 'test', stream, level: 'debug' });
  const lifecycle = createLifecycle({ logger, timeoutMs: 1000, exit, proc, ...overrides });
  return { lifecycle, exit, exitCalled, proc, lines };
}

/** A closer's own slow work (an input of the tests, not a wait). */
const work = (ms: number) => new Promise((r) => setTimeout(r, ms));
const flush = () => new Promise((r) => setImmediate(r));

/** The exit code, once exit has been called (it happens after an async stop); exactly once. */
async function exitCode({ exit, exitCalled }: { exit: jest.Mock<void, [number]>; exitCalled: Promise<number> }): Promise<number> {
  const code = await exitCalled;
  await flush();
  expect(exit).toHaveBeenCalledTimes(1);
  return code;
}

describe('lifecycle stop()', () => {
  it('runs closers in reverse registration order, each awaited before the next', async () => {
    const { lifecycle } = setup();
    const events: string[] = [];
    lifecycle.onStop('db', async () => {
      events.push('db:start');
      await work(10);
      events.push('db:end');
    });
    lifecycle.onStop('amqp', () => events.push('amqp'));
    lifecycle.onStop('http', async () => {
      events.push('http:start');
      await work(20);
      events.push('http:end');
    });
    const result = await lifecycle.stop('test');
    expect(events).toEqual(['http:start', 'http:end', 'amqp', 'db:start', 'db:end']);
    expect(result).toEqual({ ok: true, failed: [], hung: [] });
  });

  it('keeps going after a closer throws and reports it', async () => {
    const { lifecycle } = setup();
    const ran: string[] = [];
    lifecycle.onStop('db', () => ran.push('db'));
    lifecycle.onStop('broken', () => {
      throw new Error('boom');
    });
    const result = await lifecycle.stop('test');
    expect(ran).toEqual(['db']);
    expect(result).toEqual({ ok: false, failed: ['broken'], hung: [] });
  });

  it('gives up after timeoutMs and logs which closers hung', async () => {
    const { lifecycle, lines } = setup({ timeoutMs: 100 });
    lifecycle.onStop('db', () => undefined);
    lifecycle.onStop('consumer', () => new Promise(() => undefined));
    lifecycle.onStop('http', () => undefined);
    const started = Date.now();
    const result = await lifecycle.stop('test');
    expect(Date.now() - started).toBeLessThan(500);
    expect(result).toEqual({ ok: false, failed: [], hung: ['consumer', 'db'] });
    await flush();
    expect(lines.find((l) => l.message === 'stop timed out')).toMatchObject({ level: 'error', hung: ['consumer', 'db'] });
  });

  it('is idempotent: a second stop() runs nothing again and returns the same result', async () => {
    const { lifecycle } = setup();
    const closer = jest.fn(() => work(10));
    lifecycle.onStop('http', closer);
    const first = lifecycle.stop('SIGTERM');
    const second = lifecycle.stop('SIGINT');
    expect(second).toBe(first);
    expect(lifecycle.stopping).toBe(true);
    await first;
    await lifecycle.stop('again');
    expect(closer).toHaveBeenCalledTimes(1);
  });
});

describe('installSignalHandlers()', () => {
  it('on SIGTERM stops and exits 0 when every closer succeeded', async () => {
    const { lifecycle, exit, exitCalled, proc } = setup();
    const closer = jest.fn();
    lifecycle.onStop('http', closer);
    const uninstall = lifecycle.installSignalHandlers();
    proc.emit('SIGTERM', 'SIGTERM');
    expect(await exitCode({ exit, exitCalled })).toBe(0);
    expect(closer).toHaveBeenCalledTimes(1);
    uninstall();
    expect(proc.listenerCount('SIGTERM')).toBe(0);
  });

  it('exits 1 when a closer threw', async () => {
    const { lifecycle, exit, exitCalled, proc } = setup();
    lifecycle.onStop('db', () => Promise.reject(new Error('pool end failed')));
    lifecycle.installSignalHandlers();
    proc.emit('SIGINT', 'SIGINT');
    expect(await exitCode({ exit, exitCalled })).toBe(1);
  });

  it('exits 1 when the stop timed out', async () => {
    const { lifecycle, exit, exitCalled, proc } = setup({ timeoutMs: 50 });
    lifecycle.onStop('stuck', () => new Promise(() => undefined));
    lifecycle.installSignalHandlers();
    proc.emit('SIGTERM', 'SIGTERM');
    expect(await exitCode({ exit, exitCalled })).toBe(1);
  });

  it('on an unhandled rejection logs it, still runs the closers, and exits 1', async () => {
    const { lifecycle, exit, exitCalled, proc, lines } = setup();
    const closer = jest.fn();
    lifecycle.onStop('http', closer);
    lifecycle.installSignalHandlers();
    proc.emit('unhandledRejection', new Error('nobody caught me'));
    expect(await exitCode({ exit, exitCalled })).toBe(1);
    expect(closer).toHaveBeenCalledTimes(1);
    await flush();
    expect(lines.find((l) => l.message === 'unhandledRejection')).toMatchObject({ level: 'error', err: { message: 'nobody caught me' } });
  });

  it('on an uncaught exception exits 1', async () => {
    const { lifecycle, exit, exitCalled, proc } = setup();
    lifecycle.installSignalHandlers();
    proc.emit('uncaughtException', new Error('thrown'));
    expect(await exitCode({ exit, exitCalled })).toBe(1);
  });

  it('a second signal while stopping exits 1 at once instead of waiting', async () => {
    const { lifecycle, exit, proc } = setup();
    lifecycle.onStop('slow', () => work(200));
    lifecycle.installSignalHandlers();
    proc.emit('SIGINT', 'SIGINT');
    proc.emit('SIGINT', 'SIGINT');
    expect(exit).toHaveBeenCalledWith(1);
    await lifecycle.stop('wait for the first');
  });
});
