import { SCOPES, V1_OPERATIONS, V1_OWNERS, type V1Owner } from '@sched/contracts';
import { claimsOf, createTestDatabase, type TestDatabase } from '@sched/testing';
import { ADMIN_TOKEN, call, startGateway, startStubUpstream, type RunningGateway } from './support/gateway-harness';

/**
 * The gateway routes from libs/contracts V1_OPERATIONS and nothing else: every operation of the table
 * (however many there are) reaches its owner, and only its owner, with the method and path sent, an
 * internal credential for that owner acting for the key, and only with the operation's scope.
 */

type Stub = Awaited<ReturnType<typeof startStubUpstream>>;

let db: TestDatabase;
let gw: RunningGateway;
const stubs = {} as Record<V1Owner, Stub>;
let ws: string;

async function apiKey(scopes: readonly string[]): Promise<{ id: string; key: string }> {
  const res = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/api-keys`, {
    token: ADMIN_TOKEN,
    json: { name: 'k', scopes, rate_limit: { limit: 100000, window_seconds: 60 } },
  });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, key: res.body.data.key };
}

/** A concrete path of an operation: each `:name` a plain id-like segment. */
const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, (_m, name: string) => `${name.slice(0, 3).toLowerCase()}_routed1`);
const all = () => V1_OWNERS.flatMap((owner) => stubs[owner].seen);

beforeAll(async () => {
  db = await createTestDatabase({ services: ['gateway'] });
  for (const owner of V1_OWNERS) stubs[owner] = await startStubUpstream();
  const urls = Object.fromEntries(V1_OWNERS.map((owner) => [`${owner.toUpperCase().replace(/-/g, '_')}_URL`, stubs[owner].url]));
  gw = await startGateway(db, 'http://127.0.0.1:1', urls, { stubbedUpstream: true });
  ws = (await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Routing' } })).body.data.id;
});

afterAll(async () => {
  await gw?.close();
  for (const owner of V1_OWNERS) await stubs[owner]?.close();
  await db?.drop();
});

it('has an owner the gateway can reach for every operation', () => {
  expect(V1_OPERATIONS.length).toBeGreaterThan(0);
  for (const op of V1_OPERATIONS) expect(V1_OWNERS).toContain(op.owner);
});

describe.each(V1_OPERATIONS.map((op) => [`${op.method} ${op.path}`, op] as const))('%s', (_name, op) => {
  const path = concrete(op.path);

  it(`reaches ${op.owner} alone, with the method and path sent, acting for the key`, async () => {
    const { id, key } = await apiKey(SCOPES);
    const before = all().length;
    const res = await call(gw.url, op.method, `${path}?probe=1`, { token: key, json: op.method === 'POST' ? {} : undefined });
    expect(res.status).toBe(op.method === 'POST' ? 201 : 200);
    expect(all()).toHaveLength(before + 1);
    const seen = stubs[op.owner].seen.at(-1)!;
    expect(seen).toMatchObject({ method: op.method, url: `${path}?probe=1` });
    const claims = await claimsOf(seen.headers.authorization, op.owner);
    expect(claims).toMatchObject({ caller: 'gateway', principal: 'api_key', workspaceId: ws, apiKeyId: id });
    expect(claims.scopes).toContain(op.scope);
  });

  it(`needs ${op.scope} (403 naming it, nothing forwarded)`, async () => {
    const { key } = await apiKey(SCOPES.filter((s) => s !== op.scope));
    const before = all().length;
    const res = await call(gw.url, op.method, path, { token: key, json: op.method === 'POST' ? {} : undefined });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'insufficient_scope', details: [{ field: 'scope', issue: op.scope }] });
    expect(all()).toHaveLength(before);
  });
});
