import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { newRequestId, sendDataJson } from '../src';
import { testApp } from './test-app';

/** What sendDataJson sent before it wrote its pieces to the socket: res.send of the whole text. */
const WHOLE_TEXT = (json: string, requestId: string) => `{"data":${json},"meta":{"request_id":${JSON.stringify(requestId)}}}`;

const DATA = [
  JSON.stringify([{ start_at: '2026-11-23T09:00:00.000Z', timezone: 'Europe/Berlin' }]),
  JSON.stringify({ name: 'Café Zürich — 東京 🎉', n: 1 }),
  JSON.stringify('x'.repeat(30_000)),
  '[]',
];

interface Raw {
  status: number;
  headers: string[];
  body: Buffer;
}

let server: http.Server;
let port: number;

beforeAll(async () => {
  const t = testApp();
  t.route('GET', '/json/:i', (req, res) => sendDataJson(res, 200, DATA[Number(req.params.i)]!));
  // The same data as its UTF-8 bytes (what a cache of encoded answers gives).
  const BYTES = DATA.map((d) => Buffer.from(d, 'utf8'));
  t.route('GET', '/bytes/:i', (req, res) => sendDataJson(res, 200, BYTES[Number(req.params.i)]!));
  t.route('GET', '/created/:i', (req, res) => sendDataJson(res, 201, DATA[Number(req.params.i)]!));
  t.route('GET', '/old/:i', (req, res) => {
    res.status(200).type('application/json; charset=utf-8').send(WHOLE_TEXT(DATA[Number(req.params.i)]!, String(req.headers['x-request-id'])));
  });
  t.finalize();
  server = await t.listen(0, '127.0.0.1');
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        // Everything but Date, in the order and spelling sent.
        const raw: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== 'date') raw.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode!, headers: raw, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('sendDataJson', () => {
  it.each(DATA.map((_, i) => i))('sends the same bytes and headers as res.send of the whole envelope text (data %s)', async (i) => {
    const id = newRequestId();
    const now = await get(`/json/${i}`, { 'x-request-id': id });
    const before = await get(`/old/${i}`, { 'x-request-id': id });
    expect(now.status).toBe(200);
    expect(now.headers).toEqual(before.headers);
    expect(now.body.equals(before.body)).toBe(true);
    expect(JSON.parse(now.body.toString('utf8'))).toEqual({ data: JSON.parse(DATA[i]!), meta: { request_id: id } });
    expect(Number(now.headers.find((h) => h.startsWith('Content-Length'))!.split(': ')[1])).toBe(now.body.length);
    const bytes = await get(`/bytes/${i}`, { 'x-request-id': id });
    expect([bytes.status, bytes.headers]).toEqual([200, before.headers]);
    expect(bytes.body.equals(before.body)).toBe(true);
  });

  it('sends each request its own data when different answers alternate', async () => {
    for (const i of [0, 1, 0, 3, 3, 2, 1]) {
      const res = await get(`/json/${i}`);
      expect((JSON.parse(res.body.toString('utf8')) as { data: unknown }).data).toEqual(JSON.parse(DATA[i]!));
    }
  });

  it('keeps the status it is given and a fresh request id per request', async () => {
    const a = await get('/created/1');
    const b = await get('/created/1');
    expect(a.status).toBe(201);
    const idA = (JSON.parse(a.body.toString('utf8')) as { meta: { request_id: string } }).meta.request_id;
    const idB = (JSON.parse(b.body.toString('utf8')) as { meta: { request_id: string } }).meta.request_id;
    expect(idA).toMatch(/^req_[A-Za-z0-9_-]{22}$/);
    expect(idA).not.toBe(idB);
  });

  it.each([
    ['HEAD', {}],
    ['GET', { 'if-none-match': '*' }],
    ['GET', { 'if-none-match': '"abc"' }],
    ['GET', { 'if-modified-since': new Date().toUTCString() }],
  ] as const)('answers %s %j exactly as res.send did', async (method, headers) => {
    const id = newRequestId();
    const now = await get('/json/1', { ...headers, 'x-request-id': id }, method);
    const before = await get('/old/1', { ...headers, 'x-request-id': id }, method);
    expect(now.status).toBe(before.status);
    expect(now.headers).toEqual(before.headers);
    expect(now.body.equals(before.body)).toBe(true);
  });
});

describe('newRequestId', () => {
  it('makes req_ + 128 random bits in base64url, never the same twice', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = newRequestId();
      expect(id).toMatch(/^req_[A-Za-z0-9_-]{22}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(2000);
  });
});
