import { newId, webhookDeliverySchema, webhookEndpointCreatedSchema, webhookEndpointSchema } from '@sched/contracts';
import { createSecretBox } from '@sched/secrets';
import { createTestDatabase, testAmqp, waitFor, type TestAmqp, type TestDatabase, internalAuthorization } from '@sched/testing';
import { ADMIN_TOKEN, call as gatewayCall, startGateway, type RunningGateway } from '../../gateway/test/support/gateway-harness';
import {
  call,
  cleanupBroker,
  createEndpoint,
  deliveriesOf,
  SECRETS_KEY,
  startDispatch,
  startPublisher,
  startReceiver,
  type DispatchUnderTest,
  type Publisher,
  type Receiver,
} from './support/dispatch-harness';

let db: TestDatabase;
let amqp: TestAmqp;
let svc: DispatchUnderTest;
let pub: Publisher;
let rec: Receiver;
/** Every secret the API handed out in this file: none may show up anywhere else. */
const secretsSeen: string[] = [];

const base = (ws: string) => `/admin/v1/workspaces/${ws}/webhook-endpoints`;

async function endpoint(ws: string, events = ['booking.created']): Promise<{ id: string; secret: string }> {
  const created = await createEndpoint(svc.url, ws, rec.url, events as never);
  secretsSeen.push(created.secret);
  return created;
}

beforeAll(async () => {
  db = await createTestDatabase({ services: ['gateway', 'webhook-dispatch'] });
  amqp = testAmqp();
  svc = await startDispatch(db, amqp);
  pub = await startPublisher(amqp);
  rec = await startReceiver();
});

afterAll(async () => {
  await svc?.stop();
  await pub?.close();
  await rec?.close();
  await cleanupBroker(amqp);
  await db?.drop();
});

describe('webhook endpoints admin API', () => {
  it('creates an endpoint and shows its secret once: the answer has it, get and list never do', async () => {
    const ws = newId('wsp');
    const res = await call(svc.url, 'POST', base(ws), { ws, json: { url: rec.url, events: ['booking.created', 'calendar.failed'] } });
    expect(res.status).toBe(201);
    expect(webhookEndpointCreatedSchema.parse(res.body.data)).toMatchObject({
      workspace_id: ws,
      url: rec.url,
      events: ['booking.created', 'calendar.failed'],
      enabled: true,
      disabled_reason: null,
    });
    const { id, secret } = res.body.data;
    secretsSeen.push(secret);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const got = await call(svc.url, 'GET', `${base(ws)}/${id}`, { ws });
    expect(got.status).toBe(200);
    expect(webhookEndpointSchema.parse(got.body.data).id).toBe(id);
    const list = await call(svc.url, 'GET', base(ws), { ws });
    expect(list.body.data.map((e: any) => e.id)).toEqual([id]);
    for (const answer of [got, list]) {
      expect(JSON.stringify(answer.body)).not.toContain(secret.slice(6));
      expect(JSON.stringify(answer.body)).not.toContain('secret');
    }
  });

  it('stores the secret only encrypted, bound to its endpoint id', async () => {
    const ws = newId('wsp');
    const { id, secret } = await endpoint(ws);
    const rows = await db.adminPool.query('SELECT * FROM webhook_dispatch.endpoints WHERE id = $1', [id]);
    const row = rows.rows[0];
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));
    expect(JSON.stringify(row)).not.toContain(Buffer.from(secret.slice(6), 'base64').toString('hex'));
    const box = createSecretBox({ key: SECRETS_KEY });
    expect(box.open(row.secret_sealed, id)).toBe(secret);
    expect(() => box.open(row.secret_sealed, newId('whe'))).toThrow();
  });

  it('updates url, events and enabled; disabling stops pending deliveries, enabling clears the reason', async () => {
    const ws = newId('wsp');
    const { id } = await endpoint(ws);
    // First answer 200; later ones ask to come back in a minute, which keeps a delivery pending.
    const other = await startReceiver((n) => (n === 1 ? { status: 200 } : { status: 503, headers: { 'retry-after': '60' } }));
    try {
      const patched = await call(svc.url, 'PATCH', `${base(ws)}/${id}`, { ws, json: { url: other.url, events: ['booking.cancelled'] } });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ url: other.url, events: ['booking.cancelled'], enabled: true });
      expect(Date.parse(patched.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(patched.body.data.created_at));
      await pub.publish('booking.cancelled', ws);
      await waitFor(() => other.requests.length === 1, { timeoutMs: 10000 });
      await pub.publish('booking.cancelled', ws);
      await waitFor(async () => (await deliveriesOf(svc.url, ws, '?status=pending'))[0]?.attempt_count === 1, { timeoutMs: 10000 });

      const disabled = await call(svc.url, 'PATCH', `${base(ws)}/${id}`, { ws, json: { enabled: false } });
      expect(disabled.body.data).toMatchObject({ enabled: false, disabled_reason: 'admin' });
      expect(await deliveriesOf(svc.url, ws, '?status=pending')).toEqual([]);
      const [stopped] = await deliveriesOf(svc.url, ws, '?status=failed');
      expect(stopped).toMatchObject({ last_error: 'endpoint_disabled', attempt_count: 1 });
      const enabled = await call(svc.url, 'PATCH', `${base(ws)}/${id}`, { ws, json: { enabled: true } });
      expect(enabled.body.data).toMatchObject({ enabled: true, disabled_reason: null });
    } finally {
      await other.close();
    }
  });

  it('rotates the secret: the new one is shown once, and the stored one changes', async () => {
    const ws = newId('wsp');
    const { id, secret } = await endpoint(ws);
    const res = await call(svc.url, 'POST', `${base(ws)}/${id}/rotate-secret`, { ws });
    expect(res.status).toBe(200);
    const rotated = webhookEndpointCreatedSchema.parse(res.body.data);
    secretsSeen.push(rotated.secret);
    expect(rotated.secret).not.toBe(secret);
    const row = (await db.adminPool.query('SELECT secret_sealed, previous_secret_sealed, previous_secret_expires_at FROM webhook_dispatch.endpoints WHERE id = $1', [id])).rows[0];
    const box = createSecretBox({ key: SECRETS_KEY });
    expect(box.open(row.secret_sealed, id)).toBe(rotated.secret);
    expect(box.open(row.previous_secret_sealed, id)).toBe(secret);
    // Default overlap: 24 hours.
    expect(Math.abs(new Date(row.previous_secret_expires_at).getTime() - Date.now() - 86_400_000)).toBeLessThan(60_000);
    const rotatedWithBody = await call(svc.url, 'POST', `${base(ws)}/${id}/rotate-secret`, { ws, json: { please: true } });
    expect(rotatedWithBody.status).toBe(400);
  });

  it('deletes an endpoint with its deliveries; afterwards it is 404 everywhere', async () => {
    const ws = newId('wsp');
    const { id } = await endpoint(ws);
    await pub.publish('booking.created', ws);
    await waitFor(async () => (await deliveriesOf(svc.url, ws)).length === 1, { timeoutMs: 10000 });
    const del = await call(svc.url, 'DELETE', `${base(ws)}/${id}`, { ws });
    expect(del.status).toBe(204);
    for (const [method, path] of [
      ['GET', `${base(ws)}/${id}`],
      ['PATCH', `${base(ws)}/${id}`],
      ['DELETE', `${base(ws)}/${id}`],
      ['POST', `${base(ws)}/${id}/rotate-secret`],
    ] as const) {
      const res = await call(svc.url, method, path, { ws, ...(method === 'PATCH' ? { json: { enabled: true } } : {}) });
      expect(res.status).toBe(404);
    }
    expect(await deliveriesOf(svc.url, ws)).toEqual([]);
  });

  it("answers 404 for another workspace's endpoint, identical to an unknown id", async () => {
    const owner = newId('wsp');
    const intruder = newId('wsp');
    const { id } = await endpoint(owner);
    const foreign = await call(svc.url, 'GET', `${base(intruder)}/${id}`, { ws: intruder });
    const unknown = await call(svc.url, 'GET', `${base(intruder)}/${newId('whe')}`, { ws: intruder });
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body, meta: null }).toEqual({ ...unknown.body, meta: null });
    expect((await call(svc.url, 'PATCH', `${base(intruder)}/${id}`, { ws: intruder, json: { enabled: false } })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `${base(intruder)}/${id}`, { ws: intruder })).status).toBe(404);
    expect((await call(svc.url, 'GET', `${base(owner)}/${id}`, { ws: owner })).body.data.enabled).toBe(true);
    // The path's workspace must be the one the gateway's credential vouches for (403), and a credential there must be (401).
    const asIntruder = await internalAuthorization('webhook-dispatch', { principal: 'admin', workspaceId: intruder });
    const vouchedElsewhere = await fetch(`${svc.url}${base(owner)}/${id}`, { headers: { ...asIntruder, 'x-workspace-id': owner } });
    expect(vouchedElsewhere.status).toBe(403);
    expect((await fetch(`${svc.url}${base(owner)}/${id}`, { headers: { 'x-workspace-id': owner } })).status).toBe(401);
  });

  it('rejects bad input with 400 and the field, before looking the endpoint up', async () => {
    const ws = newId('wsp');
    const post = (json: unknown) => call(svc.url, 'POST', base(ws), { ws, json });
    const cases: Array<[unknown, { field: string; issue: string }]> = [
      [{ url: rec.url, events: [] }, { field: 'events', issue: 'too_short' }],
      [{ url: rec.url, events: ['calendar.synced'] }, { field: 'events.0', issue: 'invalid_value' }],
      [{ url: 'mailto:a@example.com', events: ['booking.created'] }, { field: 'url', issue: 'invalid_format' }],
      [{ url: 'https://user:pw@hooks.example.com/in', events: ['booking.created'] }, { field: 'url', issue: 'credentials_not_allowed' }],
      [{ url: 'http://10.0.0.1/in', events: ['booking.created'] }, { field: 'url', issue: 'address_not_allowed' }],
      [{ url: rec.url, events: ['booking.created'], secret: 'whsec_mine' }, { field: 'secret', issue: 'unknown_field' }],
    ];
    for (const [json, detail] of cases) {
      const res = await post(json);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([detail]);
    }
    const emptyPatch = await call(svc.url, 'PATCH', `${base(ws)}/${newId('whe')}`, { ws, json: {} });
    expect(emptyPatch.body.error.details).toEqual([{ field: 'body', issue: 'required' }]);
    const badUrlUnknownId = await call(svc.url, 'PATCH', `${base(ws)}/${newId('whe')}`, { ws, json: { url: 'http://169.254.169.254/' } });
    expect(badUrlUnknownId.status).toBe(400);
    expect((await call(svc.url, 'GET', `${base(ws)}?x=1`, { ws })).status).toBe(400);
  });
});

describe('listing deliveries', () => {
  it('pages newest first with signed cursors bound to the filters, each delivery with its attempts', async () => {
    const ws = newId('wsp');
    const { id } = await endpoint(ws);
    const events = [];
    for (let i = 0; i < 5; i++) events.push(await pub.publish('booking.created', ws));
    await waitFor(async () => (await deliveriesOf(svc.url, ws, '?status=succeeded')).length === 5, { timeoutMs: 10000 });

    const seen: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `?endpoint_id=${id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await call(svc.url, 'GET', `/admin/v1/workspaces/${ws}/webhook-deliveries${q}`, { ws });
      expect(res.status).toBe(200);
      for (const d of res.body.data) seen.push(webhookDeliverySchema.parse(d));
      cursor = res.body.meta.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.map((d) => d.event_id).sort()).toEqual(events.map((e) => e.id).sort());
    const order = seen.map((d) => `${d.created_at}|${d.id}`);
    expect(order).toEqual([...order].sort().reverse());
    expect(seen.every((d) => d.attempts.length === 1 && d.attempts[0].status_code === 200)).toBe(true);

    const first = await call(svc.url, 'GET', `/admin/v1/workspaces/${ws}/webhook-deliveries?limit=2`, { ws });
    const next = first.body.meta.next_cursor as string;
    const otherFilter = await call(svc.url, 'GET', `/admin/v1/workspaces/${ws}/webhook-deliveries?status=failed&cursor=${encodeURIComponent(next)}`, { ws });
    expect(otherFilter.status).toBe(400);
    expect(otherFilter.body.error.details).toEqual([{ field: 'cursor', issue: 'invalid_format' }]);
    const otherWs = newId('wsp');
    expect((await call(svc.url, 'GET', `/admin/v1/workspaces/${otherWs}/webhook-deliveries?cursor=${encodeURIComponent(next)}`, { ws: otherWs })).status).toBe(400);
    const tampered = `${next.slice(0, -2)}xx`;
    expect((await call(svc.url, 'GET', `/admin/v1/workspaces/${ws}/webhook-deliveries?cursor=${encodeURIComponent(tampered)}`, { ws })).status).toBe(400);
    for (const q of ['?limit=0', '?limit=101', '?status=lost', '?nope=1']) {
      expect((await call(svc.url, 'GET', `/admin/v1/workspaces/${ws}/webhook-deliveries${q}`, { ws })).status).toBe(400);
    }
    expect(await deliveriesOf(svc.url, newId('wsp'))).toEqual([]);
  });
});

describe('through the gateway', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(db, svc.url);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('serves every forwarded webhook admin path with the workspace the gateway checked', async () => {
    const ws = (await gatewayCall(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Hooks' } })).body.data.id;
    const created = await gatewayCall(gw.url, 'POST', base(ws), { token: ADMIN_TOKEN, json: { url: rec.url, events: ['booking.created'] } });
    expect(created.status).toBe(201);
    secretsSeen.push(created.body.data.secret);
    const id = created.body.data.id;
    const paths: Array<[string, string, unknown, number]> = [
      ['GET', base(ws), undefined, 200],
      ['GET', `${base(ws)}/${id}`, undefined, 200],
      ['PATCH', `${base(ws)}/${id}`, { events: ['booking.created', 'booking.cancelled'] }, 200],
      ['POST', `${base(ws)}/${id}/rotate-secret`, undefined, 200],
      ['GET', `/admin/v1/workspaces/${ws}/webhook-deliveries?status=failed`, undefined, 200],
      ['POST', `/admin/v1/workspaces/${ws}/webhook-deliveries/replay`, { endpoint_id: id, from: '2020-01-01T00:00:00Z', to: '2030-01-01T00:00:00Z' }, 202],
      ['POST', `/admin/v1/webhook-deliveries/${newId('whd')}/replay`, undefined, 404],
      ['GET', '/admin/v1/dead-letters', undefined, 200],
      ['POST', '/admin/v1/dead-letters/nope/replay', undefined, 404],
      ['DELETE', `${base(ws)}/${id}`, undefined, 204],
    ];
    for (const [method, path, json, status] of paths) {
      const res = await gatewayCall(gw.url, method, path, { token: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) });
      expect([method, path, res.status]).toEqual([method, path, status]);
      if (path.endsWith('rotate-secret')) secretsSeen.push(res.body.data.secret);
    }
    // A workspace the gateway does not know never reaches the service.
    expect((await gatewayCall(gw.url, 'GET', base(newId('wsp')), { token: ADMIN_TOKEN })).status).toBe(404);
  });
});

describe('secrets in logs', () => {
  it('never writes a webhook secret to the log, though every operation above was logged at debug level', () => {
    expect(secretsSeen.length).toBeGreaterThanOrEqual(6);
    const logs = svc.logs.join('\n');
    expect(logs.length).toBeGreaterThan(1000);
    for (const secret of secretsSeen) expect(logs).not.toContain(secret.slice(6));
  });
});
