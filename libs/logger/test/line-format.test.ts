import { PassThrough, Writable } from 'node:stream';
import { createLogger, redactString, runWithContext, type Logger } from '../src';
import { createReferenceLogger, referenceRedactString } from './reference-format';

/** Every chunk written to the stream, as written (one write per line is part of what is pinned). */
function rawCapture() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, chunks };
}

const ISO = /"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/;
/** The one field that differs between two runs of the same call: the time the line was written. */
const sameTime = (line: string) => line.replace(ISO, '"timestamp":"T"');

describe('one line', () => {
  it('is one write of one JSON object and a newline: keys sorted, the context merged, undefined fields left out', () => {
    const { stream, chunks } = rawCapture();
    const logger = createLogger({ service: 'webhook-dispatch', stream });
    const requestContext = Symbol('request context');
    runWithContext({ event_id: 'evt_1', workspace_id: 'wsp_1', [requestContext]: { principal: 'api_key' } } as object, () =>
      logger.info('webhook delivered', { delivery_id: 'dlv_1', endpoint_id: 'wep_1', event_type: 'booking.created', attempt: 1, status_code: 200, latency_ms: 3.5, error_kind: undefined }),
    );
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatch(ISO);
    expect(sameTime(chunks[0]!)).toBe(
      '{"attempt":1,"delivery_id":"dlv_1","endpoint_id":"wep_1","event_id":"evt_1","event_type":"booking.created","latency_ms":3.5,"level":"info",' +
        '"message":"webhook delivered","service":"webhook-dispatch","status_code":200,"timestamp":"T","workspace_id":"wsp_1"}\n',
    );
  });

  it('reaches its stream before the call returns (a line logged just before process.exit is not lost in a queue)', () => {
    const { stream, chunks } = rawCapture();
    const logger = createLogger({ service: 'test', stream });
    for (let i = 0; i < 50; i++) {
      logger.error('stop failed', { i });
      expect(chunks).toHaveLength(i + 1);
    }
  });

  it('takes a field of the call over the same field of the context, and keeps a timestamp the caller gave', () => {
    const { stream, chunks } = rawCapture();
    const logger = createLogger({ service: 'test', stream });
    runWithContext({ request_id: 'req_ctx' }, () => logger.info('refused', { request_id: 'req_own', timestamp: 'then' }));
    expect(JSON.parse(chunks[0]!)).toMatchObject({ request_id: 'req_own', timestamp: 'then' });
  });
});

/** Deterministic pseudo-random numbers (mulberry32), so a failure names a seed that replays it. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  '',
  'plain',
  'dlv_01JD5Y7Q8H2M4N6PQRSTVWXYZ1',
  'quote " and \\ backslash',
  'say "hi"',
  'back\\slash',
  'line\nbreak\ttab\u0001ctl\u007f',
  'unicode é ✓ 😀',
  'lone \ud800 surrogate',
  '\udc00',
  'Bearer abc.def-ghi~jkl',
  'bearer    xyz',
  'BEARER Q',
  'Bearer',
  'sk_live_AAAABBBBCCCCDDDD',
  'sk_test_short',
  'SK_LIVE_AAAABBBBCCCCDDDD',
  'xsk_live_AAAABBBBCCCCDDDD',
  'whsec_c2VjcmV0c2VjcmV0c2VjcmV0',
  'whsec_',
  'postgres://user:pw@host/db',
  'https://alice:topsecret@cal.example.com/dav',
  'HTTP://A:B@c',
  'a://b',
  'amqp://guest:guest@127.0.0.1:5672/vh',
  'http://localhost:8080/book/i/Zm9vYmFyYmF6cXV4',
  '/book/i/short',
  '/book/i/abcdefghij://u:p@h',
  'sk_',
  '%s %d%%',
  ' ',
  '[REDACTED]',
];
const KEYS = [
  'a', 'b', 'Z', 'é', '10', '2', '0', '01', '-1', 'password', 'Password', 'passwd', 'pass', 'api_key', 'apiKey', 'api-key', 'key', 'Key', 'keys',
  'key_id', 'token_count', 'private', 'cookie', 'authorization', 'x"y', 'sp ace', 'message', 'stack', 'cause', 'code', 'name', 'service',
  'request_id', 'event_id', 'constructor', 'toString', 'valueOf', 'level',
];

function generate(rnd: () => number, depth: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const kind = Math.floor(rnd() * (depth > 11 ? 9 : 16));
  switch (kind) {
    case 0:
    case 1:
    case 2:
      return Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(PIECES)).join(pick(['', ' ', ':', '/', '@']));
    case 3:
      return pick([0, -0, 1, -1.5, 3.14159, 1e21, 1e-7, NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2]);
    case 4:
      return pick([10n, -5n, 2n ** 70n]);
    case 5:
      return pick([true, false, null, undefined]);
    case 6:
      return pick([() => 1, Symbol('s'), new Date(0), new Date(NaN), new Map([[1, 2]]), new Set([1]), Buffer.from('hi'), /re/g]);
    case 7: {
      const err: Error & { code?: unknown; extra?: unknown } = new (pick([Error, TypeError, RangeError]))(pick(PIECES));
      if (rnd() < 0.5) err.code = pick(['ECONNREFUSED', '23505', 42, { not: 'kept' }, undefined, NaN]);
      if (rnd() < 0.4) err.cause = generate(rnd, depth + 1);
      if (rnd() < 0.2) err.stack = undefined;
      if (rnd() < 0.2) err.stack = `${err.name}: at ${pick(PIECES)}`;
      if (rnd() < 0.2) err.name = 'CustomError';
      if (rnd() < 0.2) err.extra = 'not kept';
      return err;
    }
    case 8: {
      const n = Math.floor(rnd() * 4);
      const arr: unknown[] = [];
      for (let i = 0; i < n; i++) arr.push(generate(rnd, depth + 1));
      if (rnd() < 0.2) arr.length += 2; // holes
      return arr;
    }
    default: {
      const obj: Record<string, unknown> = {};
      const n = Math.floor(rnd() * 5);
      for (let i = 0; i < n; i++) obj[pick(KEYS)] = generate(rnd, depth + 1);
      return obj;
    }
  }
}

/** The same calls through the logger and through the format as it was; the lines must be the same bytes. */
function compare(level: string, calls: (logger: Logger) => void, ctx: object = {}) {
  const ours = rawCapture();
  const theirs = rawCapture();
  const logger = createLogger({ service: 'svc', level, stream: ours.stream });
  const reference = createReferenceLogger({ service: 'svc', level, stream: theirs.stream });
  // One call site for both: an Error made in `calls` has the same stack either way.
  runWithContext(ctx, () => [logger, reference].forEach((l) => calls(l)));
  expect(ours.chunks.length).toBe(theirs.chunks.length);
  return { ours: ours.chunks.map(sameTime), theirs: theirs.chunks.map(sameTime) };
}

describe('redactString', () => {
  it('scrubs what the five patterns applied in turn scrub, for every piece alone and every two joined', () => {
    let changed = 0;
    for (const a of PIECES)
      for (const b of ['', ...PIECES])
        for (const sep of ['', ' ', '/', ':']) {
          const s = a + sep + b;
          expect(redactString(s)).toBe(referenceRedactString(s));
          if (referenceRedactString(s) !== s) changed += 1;
        }
    expect(changed).toBeGreaterThan(500); // the pieces do hold secrets of every kind
    for (const s of ['/book/i/Zm9vYmFyYmF6', 'sk_live_AAAABBBBCCCC', 'whsec_c2VjcmV0c2Vj', 'Authorization: bearer abc', 'amqp://guest:guest@host']) {
      expect(redactString(s)).not.toBe(s);
      expect(redactString(s)).toBe(referenceRedactString(s));
    }
  });
});

describe('the line is the same as the format chain it replaced', () => {
  it('for generated fields: nested objects, arrays with holes, errors with causes, secrets in keys and values, odd numbers and types, 12 levels deep', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const rnd = random(seed);
      const meta: Record<string, unknown> = {};
      const n = 1 + Math.floor(rnd() * 8);
      for (let i = 0; i < n; i++) meta[KEYS[Math.floor(rnd() * KEYS.length)]!] = generate(rnd, 1);
      // winston appends a message in the fields to the line's own (a template string: a string here).
      if ('message' in meta) meta.message = PIECES[Math.floor(rnd() * PIECES.length)];
      const message = PIECES[Math.floor(rnd() * PIECES.length)]!;
      const ctx = rnd() < 0.5 ? { request_id: 'req_1', workspace_id: 'wsp_1' } : { event_id: 'evt_1', password: 'ctx-secret' };
      const { ours, theirs } = compare('debug', (logger) => logger.warn(message, meta), ctx);
      if (ours.join() !== theirs.join()) throw new Error(`seed ${seed}: ${ours.join()} !== ${theirs.join()}`);
      expect(ours).toEqual(theirs);
    }
  });

  it('for the calls winston itself shapes: one argument, none, an Error as the message, meta with a message, %s, log(), a child logger', () => {
    const driver = Object.assign(new Error('duplicate key for https://u:pw12345@h/x'), { code: '23505' });
    const { ours, theirs } = compare(
      'debug',
      (logger) => {
        logger.info('http server closed');
        (logger.info as unknown as () => void).call(logger); // no argument at all
        logger.error(new Error('an Error as the message', { cause: driver }) as unknown as string);
        logger.log({ level: 'warn', message: new Error('Bearer abc.def as message') as unknown as string, extra: 1 });
        logger.warn('with a message in meta', { message: 'sk_live_AAAABBBBCCCCDDDD', stack: 'a stack', cause: 'why' });
        logger.info('%s percent', { a: 1 });
        logger.info('%s and %d', 'x', 2, { b: 2 });
        logger.log('info', 'through log()', { c: 3 });
        logger.log('error', 'two arguments to log()');
        logger.child({ component: 'child', token: 'child-token' }).info('from a child', { d: 4 });
        logger.info({ message: 'an object as the only argument', e: 5 } as unknown as string);
        logger.http('request', { request_id: 'req_2', method: 'POST', route: '/v1/bookings', status: 201, duration_ms: 4.2 });
        logger.error('unhandled error', { err: new Error('Failed query', { cause: driver }), method: 'POST' });
        logger.debug('deep', { a: { b: { c: { d: { e: { f: { g: { h: { i: { j: 1 } } } } } } } } } });
        logger.info('a field named like the level and the service', { level: 'other', service: 'other' });
      },
      { request_id: 'req_1', workspace_id: 'wsp_1' },
    );
    expect(ours).toEqual(theirs);
    expect(ours.length).toBe(15);
  });

  it('for lines below the level: none from either', () => {
    const { ours, theirs } = compare('info', (logger) => {
      logger.debug('not printed', { a: 1 });
      logger.http('not printed', { a: 1 });
      logger.info('printed', { a: 1 });
    });
    expect(ours).toEqual(theirs);
    expect(ours).toHaveLength(1);
  });
});

describe('a stream a test passes', () => {
  it('gets whole lines it can split on newlines', async () => {
    const stream = new PassThrough();
    const text: string[] = [];
    stream.on('data', (c: Buffer) => text.push(c.toString()));
    const logger = createLogger({ service: 'test', stream });
    logger.info('one');
    logger.info('two');
    await new Promise((r) => setImmediate(r));
    const lines = text.join('').split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(lines.slice(0, 2).map((l) => (JSON.parse(l) as { message: string }).message)).toEqual(['one', 'two']);
  });
});
