import request from 'supertest';
import { Counter } from 'prom-client';
import { sendData } from '../src';
import { testApp } from './test-app';

describe('/healthz and /readyz', () => {
  it('/healthz answers 200 {status:"ok"} in the data envelope', async () => {
    const t = testApp();
    t.finalize();
    const res = await request(t.app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { status: 'ok' }, meta: { request_id: res.headers['x-request-id'] } });
  });

  it('/readyz answers 200 with every check ok when all pass', async () => {
    const t = testApp({ readiness: { postgres: async () => 1, rabbitmq: async () => undefined } });
    t.finalize();
    const res = await request(t.app).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ status: 'ready', checks: { postgres: 'ok', rabbitmq: 'ok' }, failed: [] });
  });

  it('/readyz answers 503 naming the failed check, without its error message', async () => {
    const t = testApp({
      readiness: {
        postgres: async () => {
          throw new Error('connect ECONNREFUSED postgres://svc_booking:hunter2@db.internal:5432/scheduling');
        },
        rabbitmq: async () => 'ok',
      },
    });
    t.finalize();
    const res = await request(t.app).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.data).toEqual({ status: 'not_ready', checks: { postgres: 'failed', rabbitmq: 'ok' }, failed: ['postgres'] });
    expect(res.text).not.toMatch(/postgres:\/\/|hunter2|db\.internal|ECONNREFUSED/);
  });

  it('/readyz stays 200 when only a non-critical check fails, reporting it as degraded', async () => {
    const t = testApp({
      readiness: {
        postgres: async () => 'ok',
        rabbitmq: {
          critical: false,
          check: async () => {
            throw new Error('broker down');
          },
        },
      },
    });
    t.finalize();
    const res = await request(t.app).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ status: 'ready', checks: { postgres: 'ok', rabbitmq: 'degraded' }, failed: [] });
  });

  it('/readyz reports a check that hangs past 2 s as timeout', async () => {
    const t = testApp({ readiness: { slow: () => new Promise(() => undefined) } });
    t.finalize();
    const started = Date.now();
    const res = await request(t.app).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.data.checks).toEqual({ slow: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

describe('/metrics', () => {
  it('counts requests by method, route pattern (not raw URL) and status, in Prometheus text', async () => {
    const t = testApp();
    t.route('GET', '/v1/bookings/:booking', (req, res) => sendData(res, 200, {}));
    t.finalize();
    await request(t.app).get('/v1/bookings/bkg_a');
    await request(t.app).get('/v1/bookings/bkg_b');
    await request(t.app).get('/nope/bkg_c');
    await request(t.app).post('/v1/bookings/bkg_d');
    const res = await request(t.app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/v1\/bookings\/:booking",status="200",service="test"\} 2/);
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="\(unmatched\)",status="404",service="test"\} 1/);
    expect(res.text).toMatch(/http_requests_total\{method="POST",route="\/v1\/bookings\/:booking",status="405",service="test"\} 1/);
    expect(res.text).toContain('http_request_duration_seconds_bucket');
    expect(res.text).toContain('process_cpu_user_seconds_total');
    expect(res.text).not.toMatch(/bkg_[abcd]/);
  });

  it('keeps one registry per app so several apps coexist and services can add metrics', async () => {
    const a = testApp();
    const b = testApp();
    a.finalize();
    b.finalize();
    new Counter({ name: 'bookings_created_total', help: 'bookings created', registers: [a.registry] }).inc(3);
    await request(a.app).get('/healthz');
    const textA = (await request(a.app).get('/metrics')).text;
    const textB = (await request(b.app).get('/metrics')).text;
    expect(textA).toMatch(/bookings_created_total\{service="test"\} 3/);
    expect(textB).not.toContain('bookings_created_total');
    expect(textB).not.toContain('route="/healthz"');
  });
});
