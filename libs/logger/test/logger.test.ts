import { PassThrough } from 'node:stream';
import { createLogger, redact, runWithContext } from '../src';

function capture() {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on('data', (chunk: Buffer) => {
    for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
  });
  return { logger: createLogger({ service: 'test', stream, level: 'debug' }), lines };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('logger', () => {
  it('writes one JSON object per line with the service and the request id of the current context', async () => {
    const { logger, lines } = capture();
    runWithContext({ request_id: 'req_abc' }, () => logger.info('booking created', { booking_id: 'bkg_1' }));
    await flush();
    expect(lines[0]).toMatchObject({ level: 'info', message: 'booking created', service: 'test', request_id: 'req_abc', booking_id: 'bkg_1' });
    expect(typeof lines[0]!.timestamp).toBe('string');
  });

  it('never writes an API key, webhook secret, password or bearer token', async () => {
    const { logger, lines } = capture();
    logger.info('calling with Authorization: Bearer sk_live_AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH', {
      password: 'hunter2hunter2',
      nested: { webhook_secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0', note: 'key sk_test_ZZZZYYYYXXXXWWWWVVVVUUUUTTTTSSSS in text' },
      url: 'https://alice:topsecret@cal.example.com/dav',
      page: 'http://localhost:8080/book/i/Zm9vYmFyYmF6cXV4cXV1eA',
    });
    await flush();
    const text = JSON.stringify(lines[0]);
    for (const secret of ['hunter2', 'sk_live_AAAA', 'c2VjcmV0', 'sk_test_ZZZZ', 'topsecret', 'Zm9vYmFy']) expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED]');
  });

  it('keeps event ids and ordinary fields as they are', () => {
    expect(redact({ event_id: 'wev_1', key_id: 'key_1', count: 3, ok: true })).toEqual({ event_id: 'wev_1', key_id: 'key_1', count: 3, ok: true });
  });

  it('redacts errors without losing their message', () => {
    const out = redact(new Error('connect failed for https://u:pw12345@h/x')) as { message: string };
    expect(out.message).toBe('connect failed for https://u:[REDACTED]@h/x');
  });

  it('writes an error passed as a field with its stack, code and cause (what an error-level 500 log needs)', async () => {
    const { logger, lines } = capture();
    const driver = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    logger.error('unhandled error', { err: new Error('Failed query: insert …', { cause: driver }) });
    await flush();
    const err = lines[0]!.err as { name: string; message: string; stack: string; cause: { code: string; message: string; stack: string } };
    expect(lines[0]).toMatchObject({ level: 'error', message: 'unhandled error' });
    expect(err.stack).toMatch(/^Error: Failed query: insert …\n\s+at /);
    expect(err.cause).toMatchObject({ code: '23505', message: 'duplicate key value violates unique constraint' });
    expect(err.cause.stack).toContain('logger.test.ts');
  });
});

describe('lines below the level', () => {
  it('are dropped before any formatting (redaction never walks their fields), and follow a level changed at run time', async () => {
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on('data', (chunk: Buffer) => {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
    });
    const logger = createLogger({ service: 'test', stream, level: 'info' });
    let read = 0;
    const costly = {
      get detail() {
        read += 1;
        return 'x';
      },
    };
    // winston copies the top-level fields itself; nested ones are only walked by the format chain.
    logger.debug('not printed', { nested: costly });
    await flush();
    expect(lines).toHaveLength(0);
    expect(read).toBe(0);
    logger.level = 'debug';
    logger.debug('printed now', { detail: 'y' });
    await flush();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'debug', message: 'printed now', detail: 'y' });
  });
});
