import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { newId, sealedValuesReportSchema } from '@sched/contracts';
import { sealedKeyId } from '@sched/secrets';
import { createTestDatabase, testAmqp, waitFor, type TestAmqp, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { parseDispatchConfig } from '../src/config';
import { call, cleanupBroker, createEndpoint, receiverPool, startDispatch, startPublisher, type DispatchUnderTest, type Publisher } from './support/dispatch-harness';

/**
 * Secrets key rotation over webhook-dispatch's schema, with the service running: every sealed column
 * (endpoints.secret_sealed and previous_secret_sealed) moves to the new key in batches, a call cut short
 * is continued by the next, rows a writer holds are skipped and done later, deliveries keep verifying.
 */
const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
// The harness sets SECRETS_KEY; '' unsets it, so the ring alone configures the service.
const ring = (keys: string) => ({ SECRETS_KEY: '', SECRETS_KEYS: keys });

let db: TestDatabase;
let amqp: TestAmqp;
let svc: DispatchUnderTest | undefined;
let pub: Publisher;
const receivers = receiverPool();

const ws = newId('wsp');
const status = async () => sealedValuesReportSchema.parse((await call(svc!.url, 'GET', '/admin/v1/secrets/webhook-dispatch')).body.data);
const rotate = async (json?: unknown) => {
  const res = await call(svc!.url, 'POST', '/admin/v1/secrets/webhook-dispatch/rotate', json === undefined ? {} : { json });
  expect(res.status).toBe(200);
  return sealedValuesReportSchema.parse(res.body.data);
};
const sealedValues = async (): Promise<Array<{ id: string; secret_sealed: string; previous_secret_sealed: string | null }>> =>
  (await db.adminPool.query('SELECT id, secret_sealed, previous_secret_sealed FROM webhook_dispatch.endpoints ORDER BY id')).rows;
const keyIds = async () => (await sealedValues()).flatMap((r) => [r.secret_sealed, r.previous_secret_sealed]).filter((v): v is string => v !== null).map(sealedKeyId);

async function restartWith(keys: string): Promise<void> {
  await svc?.stop();
  svc = await startDispatch(db, amqp, ring(keys));
}

/** A booking.created delivery to the endpoint subscribed to it: its current secret must verify the signature. */
async function deliveredAndVerified(endpoint: { id: string; secret: string }, rec: Awaited<ReturnType<typeof receivers.start>>): Promise<void> {
  const before = rec.requests.length;
  await pub.publish('booking.created', ws);
  const got = await waitFor(() => rec.requests[before], { timeoutMs: 10000 });
  expect(() => new Webhook(endpoint.secret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
}

beforeAll(async () => {
  db = await createTestDatabase({ services: ['webhook-dispatch'] });
  amqp = testAmqp();
  pub = await startPublisher(amqp);
});

afterAll(async () => {
  await svc?.stop();
  await pub?.close();
  await receivers.closeAll();
  await cleanupBroker(amqp);
  await db?.drop();
});

describe('secrets key rotation (webhook-dispatch)', () => {
  it('re-seals every secret under the new key in resumable batches while serving, then works without the old key', async () => {
    await restartWith(`k1:${K1}`);
    const rec = await receivers.start();
    const endpoints: Array<{ id: string; secret: string }> = [];
    for (let i = 0; i < 5; i++) endpoints.push(await createEndpoint(svc!.url, ws, rec.url, i === 0 ? ['booking.created'] : ['calendar.failed']));
    // One rotated signing secret: its previous secret is sealed too (a second column).
    const rotated = await call(svc!.url, 'POST', `/admin/v1/workspaces/${ws}/webhook-endpoints/${endpoints[0]!.id}/rotate-secret`, { ws });
    endpoints[0]!.secret = rotated.body.data.secret;
    expect(await keyIds()).toEqual(Array(6).fill('k1'));

    // The new key first in the ring, the old one still there to open.
    await restartWith(`k2:${K2},k1:${K1}`);
    expect(await status()).toMatchObject({
      service: 'webhook-dispatch',
      key_id: 'k2',
      key_ids: ['k2', 'k1'],
      columns: [
        { table: 'webhook_dispatch.endpoints', column: 'secret_sealed', total: 5, current: 0, by_key_id: { k1: 5 } },
        { table: 'webhook_dispatch.endpoints', column: 'previous_secret_sealed', total: 1, current: 0, by_key_id: { k1: 1 } },
      ],
    });
    // A value written now is sealed under k2 already.
    endpoints.push(await createEndpoint(svc!.url, ws, rec.url, ['calendar.failed']));

    // Interrupted after one batch of two rows: two rows done, the call says it did not finish.
    const first = await rotate({ batch_size: 2, max_batches: 1 });
    expect(first.finished).toBe(false);
    expect(first.columns[0]).toMatchObject({ rotated: 2, total: 6, current: 3 });

    // A writer holds one k1 row in an open transaction: the next run skips it instead of waiting.
    const pending = (await sealedValues()).find((r) => sealedKeyId(r.secret_sealed) === 'k1' && r.previous_secret_sealed === null)!;
    const other = endpoints.find((e) => e.id !== pending.id)!;
    const writer = await db.pool('webhook-dispatch').connect();
    try {
      await writer.query('BEGIN');
      await writer.query('SELECT 1 FROM webhook_dispatch.endpoints WHERE id = $1 FOR UPDATE', [pending.id]);
      const second = await rotate({ batch_size: 2 });
      expect(second.finished).toBe(true);
      expect(second.columns[0]).toMatchObject({ total: 6, current: 5, failed: 0 });
      // Concurrent writes elsewhere keep working during the rotation.
      expect((await call(svc!.url, 'PATCH', `/admin/v1/workspaces/${ws}/webhook-endpoints/${other.id}`, { ws, json: { enabled: true } })).status).toBe(200);
      await writer.query('COMMIT');
    } finally {
      writer.release();
    }
    // Rerun: only what is left is touched.
    const third = await rotate();
    expect(third).toMatchObject({ finished: true, errors: [] });
    expect(third.columns.map((c) => [c.rotated, c.current, c.total])).toEqual([
      [1, 6, 6],
      [0, 1, 1],
    ]);
    expect(await keyIds()).toEqual(Array(7).fill('k2'));
    // Nothing left: a further run changes nothing.
    expect((await rotate()).columns.map((c) => c.rotated)).toEqual([0, 0]);
    await deliveredAndVerified(endpoints[0]!, rec);

    // The old key removed: everything still opens and signs.
    await restartWith(`k2:${K2}`);
    expect((await status()).columns.map((c) => c.by_key_id)).toEqual([{ k2: 6 }, { k2: 1 }]);
    await deliveredAndVerified(endpoints[0]!, rec);
    const res = await call(svc!.url, 'POST', `/admin/v1/workspaces/${ws}/webhook-endpoints/${endpoints[2]!.id}/rotate-secret`, { ws });
    expect(res.status).toBe(200);
  });

  it('leaves a value under a key no longer in the ring where it is, and reports it naming the key id', async () => {
    const row = (await sealedValues())[0]!;
    const stale = `v1.k0.${row.secret_sealed.split('.').slice(2).join('.')}`;
    await db.adminPool.query('UPDATE webhook_dispatch.endpoints SET secret_sealed = $2 WHERE id = $1', [row.id, stale]);
    const report = await rotate();
    expect(report.finished).toBe(true);
    expect(report.columns[0]).toMatchObject({ rotated: 0, failed: 1, by_key_id: { k0: 1, k2: 5 } });
    expect(report.errors).toEqual([
      { table: 'webhook_dispatch.endpoints', column: 'secret_sealed', row_id: row.id, message: 'sealed value uses key id "k0", which is not in SECRETS_KEYS (the ring has "k2")' },
    ]);
    expect((await sealedValues())[0]!.secret_sealed).toBe(stale);
    await db.adminPool.query('UPDATE webhook_dispatch.endpoints SET secret_sealed = $2 WHERE id = $1', [row.id, row.secret_sealed]);
  });

  it('refuses to start on a malformed ring, naming the variable and never the key', () => {
    const base = { CURSOR_SECRET: 'c'.repeat(32), INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS };
    expect(() => parseDispatchConfig({ ...base, SECRETS_KEYS: `k1:${K1},k1:${K2}` })).toThrow(/SECRETS_KEYS: key id "k1" appears twice/);
    expect(() => parseDispatchConfig({ ...base, SECRETS_KEYS: `k1:${K1}`, SECRETS_KEY: K2 })).toThrow(/SECRETS_KEYS: replaces SECRETS_KEY/);
    try {
      parseDispatchConfig({ ...base, SECRETS_KEYS: `k1:${K1.slice(0, 20)}` });
    } catch (err) {
      expect((err as Error).message).toMatch(/SECRETS_KEYS: the key of "k1" must be base64 of exactly 32 bytes/);
      expect((err as Error).message).not.toContain(K1.slice(0, 20));
    }
    expect(() => parseDispatchConfig({ ...base, SECRETS_KEYS: `k1:${K1}` })).not.toThrow();
  });
});
