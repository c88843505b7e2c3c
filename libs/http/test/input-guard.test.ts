import request from 'supertest';
import { createLogger } from '@sched/logger';
import { PassThrough } from 'node:stream';
import { createHttpApp, sendData } from '../src';

function app() {
  const http = createHttpApp({ service: 'test', logger: createLogger({ service: 'test', stream: new PassThrough() }) });
  http.route('POST', '/things/:id', (req, res) => sendData(res, 200, { id: req.params.id, body: req.body }));
  http.route('GET', '/things/:id', (req, res) => sendData(res, 200, { id: req.params.id, q: req.query }));
  http.finalize();
  return http.app;
}

describe('input that no service can store or pass on', () => {
  it('is 400 invalid_request naming the field: NUL in a path id, a query value or a body string', async () => {
    const a = app();
    const path = await request(a).get('/things/a%00b');
    expect(path.status).toBe(400);
    expect(path.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'id', issue: 'invalid_format' }] });
    expect((await request(a).get('/things/x?name=a%00b')).body.error.details).toEqual([{ field: 'name', issue: 'invalid_format' }]);
    const body = await request(a).post('/things/x').set('content-type', 'application/json').send('{"guest":{"name":"a\\u0000b"}}');
    expect(body.status).toBe(400);
    expect(body.body.error.details).toEqual([{ field: 'guest.name', issue: 'invalid_format' }]);
  });

  it('is 400 for a lone surrogate in a body string and for query escapes that are not UTF-8', async () => {
    const a = app();
    const lone = await request(a).post('/things/x').set('content-type', 'application/json').send('{"event_type_id":"a\\ud83dz"}');
    expect(lone.body.error.details).toEqual([{ field: 'event_type_id', issue: 'invalid_format' }]);
    const bad = await request(a).get('/things/x?limit=%ED%A0%80');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toContainEqual({ field: 'query', issue: 'invalid_format' });
  });

  it('checks every form of query: plain, ASCII escapes, other escapes, malformed escapes', async () => {
    const a = app();
    const ok = await request(a).get('/things/x?timezone=Europe%2FBerlin&b=%7E+%41&c=%C3%A9');
    expect(ok.status).toBe(200);
    expect(ok.body.data.q).toEqual({ timezone: 'Europe/Berlin', b: '~ A', c: 'é' });
    for (const q of ['a=%00', 'a=%', 'a=%2', 'a=%zz', 'a=%ED%A0%80', 'a=%F0%9F', '%00=x']) {
      const res = await request(a).get(`/things/x?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });

  it('names each field as before: array items by index, a key that is itself bad, under an empty key, at most 10', async () => {
    const a = app();
    const send = (body: string) => request(a).post('/things/x').set('content-type', 'application/json').send(body);
    const nested = await send('{"guest":{"tags":["ok","a\\u0000"]},"meta":{"k\\ud800":"v","":{"x":"\\udc00"}},"list":[[1,"\\u0000"]]}');
    expect(nested.status).toBe(400);
    expect(nested.body.error.details).toEqual([
      { field: 'guest.tags.1', issue: 'invalid_format' },
      { field: 'meta.k\ud800', issue: 'invalid_format' },
      { field: 'meta..x', issue: 'invalid_format' },
      { field: 'list.0.1', issue: 'invalid_format' },
    ]);
    // A name after an empty one starts afresh (the empty name is left out), as the walk always wrote it.
    expect((await send('{"":{"x":"\\u0000"}}')).body.error.details).toEqual([{ field: 'x', issue: 'invalid_format' }]);
    const many = await send(JSON.stringify(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, 'a\u0000']))));
    expect(many.body.error.details).toHaveLength(10);
    expect(many.body.error.details[9]).toEqual({ field: 'f9', issue: 'invalid_format' });
  });

  it('lets ordinary unicode through: emoji (a valid surrogate pair), accents, RTL text', async () => {
    const res = await request(app()).post('/things/x').set('content-type', 'application/json').send({ name: 'Zoë 🎉 שלום' });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toEqual({ name: 'Zoë 🎉 שלום' });
  });
});

