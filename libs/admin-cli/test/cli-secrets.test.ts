import { sealedValuesReportSchema, type AdminSealedValues } from '@sched/contracts';
import { runAgainst, startStubServer, type StubServer } from './support/cli-harness';

let stub: StubServer;
beforeEach(async () => {
  stub = await startStubServer();
});
afterEach(async () => {
  await stub.close();
});

const column = (table: string, column: string, current: number, total: number, extra: Partial<AdminSealedValues['columns'][number]> = {}) => ({
  table,
  column,
  total,
  current,
  by_key_id: Object.fromEntries(
    [
      ['k2', current],
      ['k1', total - current - (extra.failed ?? 0)],
      ['k0', extra.failed ?? 0],
    ].filter(([, n]) => (n as number) > 0),
  ) as Record<string, number>,
  rotated: 0,
  failed: 0,
  ...extra,
});
/** An answer of the rotate/status endpoints, checked against the contract so the stub cannot drift from it. */
const report = (service: AdminSealedValues['service'], finished: boolean, columns: AdminSealedValues['columns'], errors: AdminSealedValues['errors'] = []) => ({
  status: 200,
  body: { data: sealedValuesReportSchema.parse({ service, key_id: 'k2', key_ids: ['k2', 'k1'], finished, columns, errors }), meta: { request_id: 'req_1' } },
});
const CAL = 'calendar_sync.calendar_connections';
const WHE = 'webhook_dispatch.endpoints';
const IDEM = 'invitation.idempotency_keys';

describe('secrets rotate', () => {
  it('calls each service until every value is under the newest key, with a progress line per call', async () => {
    stub.enqueue(
      // calendar-sync: the first call stops at its time budget, the second finishes.
      report('calendar-sync', false, [column(CAL, 'password_sealed', 2, 5, { rotated: 2 })]),
      report('calendar-sync', true, [column(CAL, 'password_sealed', 5, 5, { rotated: 3 })]),
      report('invitation', true, [column(IDEM, 'response_body', 0, 0)]),
      report('webhook-dispatch', true, [column(WHE, 'secret_sealed', 3, 3, { rotated: 3 }), column(WHE, 'previous_secret_sealed', 1, 1, { rotated: 1 })]),
    );
    const r = await runAgainst(stub, ['secrets', 'rotate', '--batch-size', '50']);
    expect(r.code).toBe(0);
    expect(stub.requests.map((q) => `${q.method} ${q.path} ${q.body}`)).toEqual([
      'POST /admin/v1/secrets/calendar-sync/rotate {"batch_size":50}',
      'POST /admin/v1/secrets/calendar-sync/rotate {"batch_size":50}',
      'POST /admin/v1/secrets/invitation/rotate {"batch_size":50}',
      'POST /admin/v1/secrets/webhook-dispatch/rotate {"batch_size":50}',
    ]);
    expect(r.stderr.split('\n').slice(0, 4)).toEqual([
      'rotating calendar-sync to k2: calendar_sync.calendar_connections.password_sealed 2/5',
      'rotating calendar-sync to k2: calendar_sync.calendar_connections.password_sealed 5/5',
      'rotating invitation to k2: invitation.idempotency_keys.response_body 0/0',
      'rotating webhook-dispatch to k2: webhook_dispatch.endpoints.secret_sealed 3/3, webhook_dispatch.endpoints.previous_secret_sealed 1/1',
    ]);
    expect(r.stderr).toContain('every sealed value is under k2: older keys can now be removed from SECRETS_KEYS');
    // The summary adds up what every call re-sealed.
    expect(r.stdout).toMatch(/^calendar-sync\s+calendar_sync\.calendar_connections\.password_sealed\s+5\s+5\/5\s+k2=5$/m);
    expect(r.stdout).toMatch(/^webhook-dispatch\s+webhook_dispatch\.endpoints\.previous_secret_sealed\s+1\s+1\/1\s+k2=1$/m);
  });

  it('fails (exit 1) naming the key id of values it cannot open, after rotating everything else', async () => {
    const error = { table: WHE, column: 'secret_sealed', row_id: 'whe_1', message: 'sealed value uses key id "k0", which is not in SECRETS_KEYS (the ring has "k2", "k1")' };
    stub.enqueue(report('webhook-dispatch', true, [column(WHE, 'secret_sealed', 2, 3, { rotated: 2, failed: 1 })], [error]));
    const r = await runAgainst(stub, ['secrets', 'rotate', '--service', 'webhook-dispatch']);
    expect(r.code).toBe(1);
    expect(stub.requests).toHaveLength(1);
    expect(r.stderr).toContain('error: some values were not rotated:\n  - webhook-dispatch: webhook_dispatch.endpoints.secret_sealed row whe_1: sealed value uses key id "k0", which is not in SECRETS_KEYS');
    expect(r.stdout).toMatch(/^webhook-dispatch\s+webhook_dispatch\.endpoints\.secret_sealed\s+2\s+2\/3\s+k2=2 k0=1$/m);
  });

  it('passes again over rows a writer held during a pass', async () => {
    stub.enqueue(report('invitation', true, [column(IDEM, 'response_body', 3, 4, { rotated: 3 })]), report('invitation', true, [column(IDEM, 'response_body', 4, 4, { rotated: 1 })]));
    const r = await runAgainst(stub, ['--json', 'secrets', 'rotate', '--service', 'invitation']);
    expect(r.code).toBe(0);
    expect(stub.requests).toHaveLength(2);
    expect(JSON.parse(r.stdout)).toMatchObject([{ service: 'invitation', columns: [{ rotated: 4, current: 4, total: 4 }] }]);
  });

  it('refuses an unknown service or batch size before calling anything', async () => {
    expect((await runAgainst(stub, ['secrets', 'rotate', '--service', 'gateway'])).code).toBe(2);
    expect((await runAgainst(stub, ['secrets', 'rotate', '--batch-size', '0'])).code).toBe(2);
    expect(stub.requests).toHaveLength(0);
  });
});

describe('secrets status', () => {
  it('shows the values per key id of every sealing service', async () => {
    stub.enqueue(
      report('calendar-sync', true, [column(CAL, 'password_sealed', 1, 3)]),
      report('invitation', true, [column(IDEM, 'response_body', 0, 0)]),
      report('webhook-dispatch', true, [column(WHE, 'secret_sealed', 2, 2), column(WHE, 'previous_secret_sealed', 0, 0)]),
    );
    const r = await runAgainst(stub, ['secrets', 'status']);
    expect(r.code).toBe(0);
    expect(stub.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /admin/v1/secrets/calendar-sync', 'GET /admin/v1/secrets/invitation', 'GET /admin/v1/secrets/webhook-dispatch']);
    expect(r.stdout).toMatch(/^calendar-sync\s+k2\s+calendar_sync\.calendar_connections\.password_sealed\s+3\s+1\s+k2=1 k1=2$/m);
    expect(r.stdout).toContain('values under older keys remain in calendar-sync: run `pnpm admin secrets rotate`');
  });
});
