import { createSecretKey, type KeyObject } from 'node:crypto';
import { CompactSign, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';

/**
 * The credential every internal call carries (docs/security.md, "Trust inside the cluster"): a JWT
 * (RFC 7519) signed with HS256 under a per-deploy key ring, made by the calling service for one
 * request to one service and valid for seconds. It says who calls (`iss`, a service name), to whom
 * (`aud`), on whose behalf (the principal: an API key with its scopes, the operator, the booking page,
 * or the service itself), in which workspace, and the request id. Services believe nothing else about
 * a caller: context headers that the credential does not vouch for are ignored.
 */

/** Who a request acts for, as the gateway authenticated it (or the calling service itself). */
export type PrincipalKind = 'api_key' | 'admin' | 'booking_page' | 'service';

export const PRINCIPAL_KINDS: readonly PrincipalKind[] = ['api_key', 'admin', 'booking_page', 'service'];

/** What a credential vouches for. */
export interface CallerClaims {
  /** The calling service (`iss`). */
  caller: string;
  principal: PrincipalKind;
  workspaceId?: string;
  apiKeyId?: string;
  /** The API key's scopes (principal `api_key`). */
  scopes?: readonly string[];
  /** The invitation a booking page visitor holds (principal `booking_page`, set by the invitation service). */
  invitationId?: string;
  requestId: string;
}

/** The part of CallerClaims a caller hands on: everything but the caller, which is the signer itself. */
export type OnBehalfOf = Omit<CallerClaims, 'caller'>;

/** `Authorization: Bearer <credential>` on internal calls. */
export const INTERNAL_CREDENTIAL_HEADER = 'authorization';

/** Default lifetime: long enough for one hop and clock skew, too short to be worth stealing. */
export const CREDENTIAL_TTL_SECONDS = 30;
/** Allowed clock difference between two pods. */
export const CLOCK_TOLERANCE_SECONDS = 5;

export class InternalKeyRingError extends Error {}

interface RingKey {
  kid: string;
  key: KeyObject;
}

/** The signing keys: the first signs, all verify (a rollover keeps two). */
export interface InternalKeyRing {
  signing: RingKey;
  byKid: ReadonlyMap<string, KeyObject>;
}

const KID = /^[A-Za-z0-9_-]{1,32}$/;
const MIN_KEY_BYTES = 32;

/**
 * Parses `INTERNAL_AUTH_KEYS`: comma-separated `<key id>:<base64 of at least 32 random bytes>`, newest
 * first. Throws naming the entry that is wrong, never the key material.
 */
export async function parseInternalKeyRing(raw: string): Promise<InternalKeyRing> {
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  if (entries.length === 0) throw new InternalKeyRingError('INTERNAL_AUTH_KEYS is empty: give at least one <key id>:<base64 key>');
  const keys: RingKey[] = [];
  for (const [i, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const kid = colon < 0 ? '' : entry.slice(0, colon);
    if (!KID.test(kid)) throw new InternalKeyRingError(`INTERNAL_AUTH_KEYS entry ${i + 1}: expected <key id>:<base64 key> with a key id of 1-32 letters, digits, _ or -`);
    if (keys.some((k) => k.kid === kid)) throw new InternalKeyRingError(`INTERNAL_AUTH_KEYS: key id "${kid}" appears twice`);
    const bytes = Buffer.from(entry.slice(colon + 1), 'base64');
    if (bytes.length < MIN_KEY_BYTES) throw new InternalKeyRingError(`INTERNAL_AUTH_KEYS key "${kid}": must be base64 of at least ${MIN_KEY_BYTES} bytes`);
    // A node KeyObject, made once: jose hands it to node's HMAC as it is (a WebCrypto CryptoKey it
    // would check and convert to a KeyObject on every sign and verify).
    keys.push({ kid, key: createSecretKey(bytes) });
  }
  return { signing: keys[0]!, byKid: new Map(keys.map((k) => [k.kid, k.key])) };
}

/** Makes the credentials one service sends. */
export interface CredentialSigner {
  readonly service: string;
  sign(audience: string, onBehalfOf: OnBehalfOf): Promise<string>;
}

const encoder = new TextEncoder();

const json = JSON.stringify;

/**
 * The JWT's claims set as its JSON text, written as JSON.stringify writes the object jose's SignJWT
 * signs: the claims it is given (`prn`, `rid`, then those present of `wsp`, `key`, `scp`, `inv`), then
 * its setters' `iss`, `aud`, `iat`, `exp`. So the credential is byte for byte the one SignJWT would
 * make (tested), without building and serialising an object per credential: `tail` is the part after
 * the claims up to `iat`'s value, the same for every credential of one signer and audience.
 */
function claimsJson(who: OnBehalfOf, tail: string, issuedAt: number, expiresAt: number): string {
  let text = `{"prn":${json(who.principal)},"rid":${json(who.requestId)}`;
  if (who.workspaceId !== undefined) text += `,"wsp":${json(who.workspaceId)}`;
  if (who.apiKeyId !== undefined) text += `,"key":${json(who.apiKeyId)}`;
  if (who.scopes !== undefined) text += `,"scp":${json(who.scopes)}`;
  if (who.invitationId !== undefined) text += `,"inv":${json(who.invitationId)}`;
  return `${text}${tail}${json(issuedAt)},"exp":${json(expiresAt)}}`;
}

export function createCredentialSigner(opts: { service: string; ring: InternalKeyRing; ttlSeconds?: number }): CredentialSigner {
  const ttl = opts.ttlSeconds ?? CREDENTIAL_TTL_SECONDS;
  // What does not change per credential is made once: the protected header and the key.
  const header = { alg: 'HS256', typ: 'JWT', kid: opts.ring.signing.kid } as const;
  const { key } = opts.ring.signing;
  const tails = new Map<string, string>();
  return {
    service: opts.service,
    sign(audience, who) {
      const now = Math.floor(Date.now() / 1000);
      let tail = tails.get(audience);
      if (tail === undefined) {
        tail = `,"iss":${json(opts.service)},"aud":${json(audience)},"iat":`;
        // The audiences are the few services this one calls; anything past that is not kept.
        if (tails.size < 32) tails.set(audience, tail);
      }
      // A JWT is a compact JWS of its claims set: jose's CompactSign of the JSON SignJWT would sign.
      return new CompactSign(encoder.encode(claimsJson(who, tail, now, now + ttl))).setProtectedHeader(header).sign(key);
    },
  };
}

/** Why a credential was refused; the caller gets one 401 whatever the reason, the log gets the reason. */
export class CredentialRefused extends Error {
  constructor(readonly reason: 'missing' | 'malformed' | 'unknown_key' | 'bad_signature' | 'expired' | 'wrong_audience' | 'invalid_claims') {
    super(`internal credential refused: ${reason}`);
  }
}

export interface CredentialVerifier {
  readonly service: string;
  /** The claims of a valid credential for this service; throws CredentialRefused otherwise. */
  verify(authorizationHeader: string | undefined): Promise<CallerClaims>;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

export function createCredentialVerifier(opts: { service: string; ring: InternalKeyRing }): CredentialVerifier {
  return {
    service: opts.service,
    async verify(header) {
      if (header === undefined || header === '') throw new CredentialRefused('missing');
      const token = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(header)?.[1];
      if (!token) throw new CredentialRefused('malformed');
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(
          token,
          async (header) => {
            const key = header.kid === undefined ? undefined : opts.ring.byKid.get(header.kid);
            if (!key) throw new CredentialRefused('unknown_key');
            return key;
          },
          { algorithms: ['HS256'], audience: opts.service, clockTolerance: CLOCK_TOLERANCE_SECONDS, requiredClaims: ['iss', 'aud', 'exp', 'iat'] },
        ));
      } catch (err) {
        if (err instanceof CredentialRefused) throw err;
        if (err instanceof joseErrors.JWTExpired) throw new CredentialRefused('expired');
        if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw new CredentialRefused('bad_signature');
        if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud') throw new CredentialRefused('wrong_audience');
        throw new CredentialRefused('malformed');
      }
      const principal = payload.prn;
      const caller = str(payload.iss);
      const requestId = str(payload.rid);
      if (!caller || !requestId || typeof principal !== 'string' || !(PRINCIPAL_KINDS as readonly string[]).includes(principal)) throw new CredentialRefused('invalid_claims');
      // A lifetime longer than any signer makes is not one of ours, whatever its signature.
      if (typeof payload.iat === 'number' && typeof payload.exp === 'number' && payload.exp - payload.iat > CREDENTIAL_TTL_SECONDS * 10) throw new CredentialRefused('invalid_claims');
      const scopes = Array.isArray(payload.scp) && payload.scp.every((s) => typeof s === 'string') ? (payload.scp as string[]) : undefined;
      return {
        caller,
        principal: principal as PrincipalKind,
        workspaceId: str(payload.wsp),
        apiKeyId: str(payload.key),
        scopes,
        invitationId: str(payload.inv),
        requestId,
      };
    },
  };
}
