import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import request from 'supertest';
import { sendData } from '../src';
import { BODY_MAX_DEPTH, nestsDeeperThan } from '../src/json-body.middleware';
import { testApp } from './test-app';

/** Hostile input gets a 4xx with the envelope, never a 500 nor Node's bare answer (docs/security.md, "Hostile input"). */

function app() {
  const t = testApp();
  // Echoes the body through JSON.stringify, as the gateway does when it forwards it.
  t.route('POST', '/echo', (req, res) => sendData(res, 200, { json: JSON.stringify(req.body) }));
  t.finalize();
  return t;
}

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** supertest would serialise a Buffer to JSON under a JSON content type: these bytes go as they are. */
const sendBytes = (req: request.Test, bytes: Buffer) => req.serialize((b: Buffer) => b as unknown as string).send(bytes);

const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('nesting depth of JSON bodies', () => {
  it(`is counted outside strings only, up to ${BODY_MAX_DEPTH}`, () => {
    const bytes = (s: string) => Buffer.from(s, 'utf8');
    expect(nestsDeeperThan(bytes(nested(BODY_MAX_DEPTH)), BODY_MAX_DEPTH)).toBe(false);
    expect(nestsDeeperThan(bytes(nested(BODY_MAX_DEPTH + 1)), BODY_MAX_DEPTH)).toBe(true);
    expect(nestsDeeperThan(bytes(JSON.stringify({ s: '['.repeat(1000), t: '\\"[[[[', u: '"{{{{' })), BODY_MAX_DEPTH)).toBe(false);
    expect(nestsDeeperThan(bytes(`["\\\\",${nested(BODY_MAX_DEPTH)}]`), BODY_MAX_DEPTH)).toBe(true);
    expect(nestsDeeperThan(bytes(`{"é🙂":${nested(10)}}`), BODY_MAX_DEPTH)).toBe(false);
  });

  it('a body 10,000 deep (arrays or objects) is 400 invalid_request, not a 500 from the stack', async () => {
    const t = app();
    for (const body of [nested(10_000), nestedObject(10_000), `{"x":${nested(BODY_MAX_DEPTH + 1)}}`]) {
      const res = await request(t.app).post('/echo').set('content-type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { code: 'invalid_request', message: expect.any(String), details: [{ field: 'body', issue: 'too_deep' }] },
        meta: { request_id: res.headers['x-request-id'] },
      });
    }
  });

  it(`a body exactly ${BODY_MAX_DEPTH} deep is fine`, async () => {
    const res = await request(app().app).post('/echo').set('content-type', 'application/json').send(nestedObject(BODY_MAX_DEPTH - 1));
    expect(res.status).toBe(200);
  });
});

describe('text encoding of JSON bodies', () => {
  it('bytes that are not UTF-8 are 400 invalid_request body/invalid_format, never stored as U+FFFD', async () => {
    const t = app();
    const invalid = [
      Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff]), Buffer.from('b"}')]),
      Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3]), Buffer.from('"}')]), // truncated sequence
      Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), // encoded surrogate
      Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]), // overlong
    ];
    for (const body of invalid) {
      const res = await sendBytes(request(t.app).post('/echo').set('content-type', 'application/json'), body);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'invalid_request', message: 'The request body is not valid UTF-8.', details: [{ field: 'body', issue: 'invalid_format' }] });
    }
    const ok = await sendBytes(request(t.app).post('/echo').set('content-type', 'application/json; charset=UTF-8'), Buffer.from('{"name":"é🙂"}'));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body.data.json)).toEqual({ name: 'é🙂' });
  });

  it('a charset other than UTF-8 is 415 (RFC 8259 §8.1)', async () => {
    const t = app();
    for (const type of ['application/json; charset=utf-16', 'application/json; charset=utf-16le', 'application/json; charset=latin1']) {
      const res = await sendBytes(request(t.app).post('/echo').set('content-type', type), Buffer.from('{"a":1}'));
      expect(res.status).toBe(415);
      expect(res.body.error.code).toBe('unsupported_media_type');
    }
  });
});

describe('what the HTTP parser refuses', () => {
  let server: http.Server;
  let t: ReturnType<typeof app>;
  beforeAll(async () => {
    t = app();
    server = await t.listen(0, '127.0.0.1');
  });
  afterAll(() => t.close());

  /** Sends raw bytes and reads everything until the server closes. */
  function raw(bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      let answer = '';
      socket.on('data', (c) => (answer += c.toString('latin1')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
      socket.end(bytes);
    });
  }

  function parse(answer: string): { status: number; headers: Record<string, string>; body: any } {
    const [head, body] = answer.split('\r\n\r\n') as [string, string];
    const [statusLine, ...lines] = head.split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) };
  }

  it('headers over the limit (a 20 KB header) get 431 with the error envelope, not a bare 431', async () => {
    const answer = parse(await raw(`GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual({
      error: { code: 'invalid_request', message: 'The request headers are too large.', details: [{ field: 'headers', issue: 'too_long' }] },
      meta: { request_id: answer.headers['x-request-id'] },
    });
    expect(answer.headers['x-request-id']).toMatch(/^req_/);
  });

  it('a request that is not HTTP gets 400 with the envelope', async () => {
    const answer = parse(await raw('HELLO\x01 /\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toEqual({ code: 'invalid_request', message: 'The request is not valid HTTP.', details: [] });
  });

  it('still serves the next connection normally', async () => {
    const ok = await raw('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"a":1}');
    expect(ok.startsWith('HTTP/1.1 200')).toBe(true);
  });
});

describe('what the HTTP parser refuses on a connection with answers', () => {
  let server: http.Server;
  let t: ReturnType<typeof testApp>;
  beforeAll(async () => {
    t = testApp();
    t.route('POST', '/echo', (req, res) => sendData(res, 200, { json: JSON.stringify(req.body) }));
    // An answer that has started and is still being written.
    t.route('GET', '/slow', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first;');
      setTimeout(() => res.end('last'), 300);
    });
    server = await t.listen(0, '127.0.0.1');
  });
  afterAll(() => t.close());

  /** Sends `first`, then `then` once the first bytes of the answer are in; reads until the connection closes. */
  function exchange(first: string, then: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      let answer = '';
      socket.once('data', () => socket.write(then));
      socket.on('data', (c) => (answer += c.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(answer));
      socket.write(first);
    });
  }

  it('after a finished answer, a refused request gets the envelope', async () => {
    const answer = await exchange('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}', 'HELLO\x01 /\r\n\r\n');
    expect(answer.startsWith('HTTP/1.1 200')).toBe(true);
    expect(answer).toContain('HTTP/1.1 400 Bad Request');
    expect(answer).toContain('"The request is not valid HTTP."');
  });

  it('while an answer is being written, a refused request cuts the connection instead of writing into that answer', async () => {
    const answer = await exchange('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n', 'HELLO\x01 /\r\n\r\n');
    expect(answer.startsWith('HTTP/1.1 200')).toBe(true);
    expect(answer).toContain('first;');
    expect(answer).not.toContain('HTTP/1.1 400');
    expect(answer).not.toContain('last');
  });
});
