import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'express';
import { DomainError } from '@sched/contracts';
import { sendError, sendJson, sendText } from '../src';
import { testApp } from './test-app';

/**
 * sendText and sendJson write on node's own response what express's res.send and res.json write in an
 * app from createHttpApp: the fast path answers with them, so they must be byte for byte express's.
 * Each case is answered once by ours and once by express's own method on the same app.
 */

const CASES: Record<string, { status: number; type?: string; body: string }> = {
  json: { status: 200, type: 'application/json; charset=utf-8', body: '{"data":{"name":"Café 東京 🎉"}}' },
  'json-no-charset': { status: 200, type: 'application/json', body: '{"a":1}' },
  'other-charset': { status: 200, type: 'text/plain; charset=latin1; x=y', body: 'plain' },
  'upper-case-type': { status: 200, type: 'Text/HTML', body: '<p>x</p>' },
  none: { status: 200, body: 'no type given' },
  long: { status: 200, type: 'application/json; charset=utf-8', body: JSON.stringify('é'.repeat(3000)) },
  empty: { status: 200, type: 'application/json; charset=utf-8', body: '' },
  'not-found': { status: 404, type: 'application/json; charset=utf-8', body: '{"error":{}}' },
  'no-content': { status: 204, type: 'application/json; charset=utf-8', body: '' },
  'reset-content': { status: 205, body: 'ignored' },
  'not-modified': { status: 304, body: 'ignored' },
};

let server: http.Server;
let port: number;

function answerWith(send: (res: Response, status: number, body: string) => void) {
  return (req: { params: Record<string, unknown> }, res: Response) => {
    const c = CASES[String(req.params.case)]!;
    if (c.type) res.setHeader('content-type', c.type);
    send(res, c.status, c.body);
  };
}

beforeAll(async () => {
  const t = testApp();
  t.route('GET', '/ours/:case', answerWith((res, status, body) => sendText(res, status, body)));
  t.route('GET', '/express/:case', answerWith((res, status, body) => res.status(status).send(body)));
  t.route('GET', '/ours-pieces/:case', answerWith((res, status, body) => sendText(res, status, [Buffer.from(body.slice(0, 3), 'utf8'), body.slice(3)])));
  t.route('GET', '/ours-json', (_req, res) => sendJson(res, 201, { data: [1, 'é'], meta: {} }));
  t.route('GET', '/express-json', (_req, res) => {
    res.status(201).json({ data: [1, 'é'], meta: {} });
  });
  t.route('GET', '/ours-error', (_req, res) => sendError(res, new DomainError('rate_limited', { retryAfterSeconds: 3 })));
  t.finalize();
  server = await t.listen(0, '127.0.0.1');
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers: { 'x-request-id': 'req_same', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== 'date') raw.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode!, headers: raw, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const REQUESTS: Array<[string, Record<string, string>]> = [
  ['GET', {}],
  ['HEAD', {}],
  ['GET', { 'if-none-match': '*' }],
  ['GET', { 'if-none-match': '*', 'cache-control': 'no-cache' }],
  ['GET', { 'if-none-match': '"abc"' }],
  ['GET', { 'if-modified-since': new Date().toUTCString() }],
];

describe('sendText', () => {
  it.each(Object.keys(CASES).flatMap((name) => REQUESTS.map(([method, headers]) => [name, method, headers] as const)))(
    'answers %s to %s %j as res.send does',
    async (name, method, headers) => {
      const express = await get(`/express/${name}`, headers, method);
      for (const ours of [await get(`/ours/${name}`, headers, method), await get(`/ours-pieces/${name}`, headers, method)]) {
        expect(ours.status).toBe(express.status);
        expect(ours.headers).toEqual(express.headers);
        expect(ours.body.equals(express.body)).toBe(true);
      }
    },
  );
});

describe('sendJson', () => {
  it('answers as res.json does', async () => {
    const ours = await get('/ours-json');
    const express = await get('/express-json');
    expect(ours.status).toBe(201);
    expect(ours.headers).toEqual(express.headers);
    expect(ours.body.equals(express.body)).toBe(true);
  });

  it('carries the error envelope with its headers (sendError)', async () => {
    const res = await get('/ours-error');
    expect(res.status).toBe(429);
    expect(res.headers).toEqual(expect.arrayContaining(['Retry-After: 3', 'Content-Type: application/json; charset=utf-8']));
    expect(JSON.parse(res.body.toString('utf8'))).toEqual({ error: { code: 'rate_limited', message: expect.any(String), details: [] }, meta: { request_id: 'req_same' } });
  });
});
