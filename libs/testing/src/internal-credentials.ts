import { randomBytes } from 'node:crypto';
import { SCOPES } from '@sched/contracts';
import { createCredentialSigner, createCredentialVerifier, parseInternalKeyRing, type CallerClaims, type OnBehalfOf } from '@sched/http';

/**
 * The internal credential key ring of the services a test process starts (INTERNAL_AUTH_KEYS): one per
 * test process, made at random, so a credential from one run is worth nothing in another.
 */
export const TEST_INTERNAL_AUTH_KEYS = `test:${randomBytes(32).toString('base64')}`;

/**
 * `Authorization` for a test that calls a service directly, as `caller` would (the gateway by default)
 * on behalf of `who`: a credential signed with `keys` (default TEST_INTERNAL_AUTH_KEYS).
 */
export async function internalAuthorization(
  audience: string,
  who: Partial<OnBehalfOf> & Pick<OnBehalfOf, 'principal'>,
  opts: { caller?: string; keys?: string; ttlSeconds?: number } = {},
): Promise<{ authorization: string }> {
  const signer = createCredentialSigner({ service: opts.caller ?? 'gateway', ring: await parseInternalKeyRing(opts.keys ?? TEST_INTERNAL_AUTH_KEYS), ttlSeconds: opts.ttlSeconds });
  return { authorization: `Bearer ${await signer.sign(audience, { requestId: `req_test${randomBytes(6).toString('hex')}`, ...who })}` };
}


/** Who calls which internal route in the running system (services' access tables), for tests that call a service directly. */
const INTERNAL_CALLERS: ReadonlyArray<[RegExp, string, OnBehalfOf['principal']]> = [
  [/^\/internal\/v1\/workspaces\/[^/]+\/slot-checks?$/, 'booking', 'api_key'],
  [/^\/internal\/v1\/workspaces\/[^/]+\/hosts\/[^/]+\/busy$/, 'availability', 'service'],
  [/^\/internal\/v1\/workspaces\/[^/]+\/hosts\/[^/]+$/, 'calendar-sync', 'service'],
  [/^\/internal\/v1\/workspaces\/[^/]+\/event-types\/by-slug\/[^/]+$/, 'invitation', 'booking_page'],
  [/^\/internal\/v1\/workspaces\/[^/]+\/event-types\/[^/]+$/, 'invitation', 'api_key'],
  [/^\/internal\/v1\/workspaces\/[^/]+\/bookings$/, 'invitation', 'booking_page'],
  [/^\/internal\/v1\/(workspaces\/[^/]+\/)?page\//, 'gateway', 'booking_page'],
  [/^\/internal\/v1\/oauth\/callback$/, 'gateway', 'service'],
];

/**
 * The credential the running system would send with `path` to `audience`: the gateway for an operator
 * on `/admin`, the gateway for an all-scopes API key on `/v1`, the calling service for `/internal`.
 * The workspace is the path's (`/workspaces/{ws}`), else `opts.workspaceId`.
 */
export async function credentialFor(
  audience: string,
  path: string,
  opts: { workspaceId?: string; invitationId?: string; keys?: string } = {},
): Promise<{ authorization: string }> {
  const bare = path.split('?')[0]!;
  const workspaceId = /\/workspaces\/([^/]+)/.exec(bare)?.[1] ?? opts.workspaceId;
  if (bare.startsWith('/admin/')) return internalAuthorization(audience, { principal: 'admin', workspaceId }, { keys: opts.keys });
  if (bare.startsWith('/v1/')) {
    return internalAuthorization(audience, { principal: 'api_key', workspaceId, apiKeyId: 'key_test', scopes: SCOPES }, { keys: opts.keys });
  }
  const known = INTERNAL_CALLERS.find(([pattern]) => pattern.test(bare));
  if (!known) throw new Error(`credentialFor: no known caller of ${bare}; add it to INTERNAL_CALLERS`);
  const [, caller, principal] = known;
  const key = principal === 'api_key' ? { apiKeyId: 'key_test', scopes: SCOPES } : {};
  return internalAuthorization(audience, { principal, workspaceId, invitationId: opts.invitationId, ...key }, { caller, keys: opts.keys });
}

/** What a credential a stub received vouches for (verified with `keys`, default TEST_INTERNAL_AUTH_KEYS), for asserting on what a service sent. */
export async function claimsOf(authorization: string | string[] | undefined, audience: string, keys = TEST_INTERNAL_AUTH_KEYS): Promise<CallerClaims> {
  const verifier = createCredentialVerifier({ service: audience, ring: await parseInternalKeyRing(keys) });
  return verifier.verify(typeof authorization === 'string' ? authorization : undefined);
}
