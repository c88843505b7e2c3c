import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';

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
  /** sign(), without the promise: signing never waits for anything. */
  signNow(audience: string, onBehalfOf: OnBehalfOf): string;
}

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

/** base64url of a JSON text's UTF-8 bytes, as jose encodes a JWS's protected header and payload. */
const base64url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

/** The protected header every signer of this system writes, encoded: jose's encoding of `{alg, typ, kid}`. */
const encodedHeaderOf = (kid: string): string => base64url(json({ alg: 'HS256', typ: 'JWT', kid }));

/** HMAC-SHA256 of a JWS signing input (ASCII: two base64url segments and a dot). */
const hs256 = (key: KeyObject, signingInput: string): Buffer => createHmac('sha256', key).update(signingInput, 'latin1').digest();

export function createCredentialSigner(opts: { service: string; ring: InternalKeyRing; ttlSeconds?: number }): CredentialSigner {
  const ttl = opts.ttlSeconds ?? CREDENTIAL_TTL_SECONDS;
  // What does not change per credential is made once: the encoded protected header and the key.
  const header = encodedHeaderOf(opts.ring.signing.kid);
  const { key } = opts.ring.signing;
  const tails = new Map<string, string>();
  const signNow = (audience: string, who: OnBehalfOf): string => {
    const now = Math.floor(Date.now() / 1000);
    let tail = tails.get(audience);
    if (tail === undefined) {
      tail = `,"iss":${json(opts.service)},"aud":${json(audience)},"iat":`;
      // The audiences are the few services this one calls; anything past that is not kept.
      if (tails.size < 32) tails.set(audience, tail);
    }
    // A JWT is a compact JWS of its claims set (RFC 7515 §7.1): base64url(header) '.' base64url(claims)
    // '.' base64url(HMAC-SHA256 of the two). Written with node's crypto rather than jose's CompactSign,
    // whose async layers, checks of a header that never changes and copies cost several times the HMAC;
    // the token is byte for byte the one jose's SignJWT makes (tested).
    const signingInput = `${header}.${base64url(claimsJson(who, tail, now, now + ttl))}`;
    return `${signingInput}.${hs256(key, signingInput).toString('base64url')}`;
  };
  return {
    service: opts.service,
    signNow,
    sign: async (audience, who) => signNow(audience, who),
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
  /**
   * verify()'s answer at once where it can be given without waiting, which is for every credential
   * this system's signers make (and every header verify() refuses before looking at the token): the
   * claims, or CredentialRefused thrown. Undefined when only verify() can tell (a token whose
   * protected header is not one the signers write).
   */
  verifyNow?(authorizationHeader: string | undefined): CallerClaims | undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

const BEARER = /^Bearer ([A-Za-z0-9_.-]+)$/;

/** The token of an Authorization header; CredentialRefused (missing, malformed) for anything else. */
function tokenOf(header: string | undefined): string {
  if (header === undefined || header === '') throw new CredentialRefused('missing');
  const token = BEARER.exec(header)?.[1];
  if (!token) throw new CredentialRefused('malformed');
  return token;
}

/** What jose's jwtVerify options say, for both paths below. */
const REQUIRED_CLAIMS = ['iss', 'aud', 'exp', 'iat'];

/** jose's reading of a claims set (isObject): a plain JSON object, not an array or null. */
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && Object.prototype.toString.call(v) === '[object Object]';

const utf8 = new TextDecoder();

/**
 * jose's jwtVerify of `token` (HS256 only, `aud` this service, the required claims, the clock
 * tolerance), its errors mapped to the reasons CredentialRefused names: the reference for every token,
 * and the path of those the known headers below do not cover.
 */
async function verifyWithJose(token: string, service: string, ring: InternalKeyRing): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid === undefined ? undefined : ring.byKid.get(header.kid);
        if (!key) throw new CredentialRefused('unknown_key');
        return key;
      },
      { algorithms: ['HS256'], audience: service, clockTolerance: CLOCK_TOLERANCE_SECONDS, requiredClaims: REQUIRED_CLAIMS },
    );
    return payload;
  } catch (err) {
    if (err instanceof CredentialRefused) throw err;
    if (err instanceof joseErrors.JWTExpired) throw new CredentialRefused('expired');
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw new CredentialRefused('bad_signature');
    if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud') throw new CredentialRefused('wrong_audience');
    throw new CredentialRefused('malformed');
  }
}

/**
 * What verifyWithJose answers, computed in place for a token whose protected header segment is exactly
 * one the signers write (`{"alg":"HS256","typ":"JWT","kid":<a kid of the ring>}`, encodedHeaderOf): for
 * that header jose's JWS steps come down to the HMAC check, and its claims checks are these, in its
 * order. Undefined for any other header (jose decides those). A test compares the two on generated
 * tokens (claims of every type, times around now, audiences, tampered signatures and segments).
 */
function verifyKnownHeader(token: string, service: string, keyByHeader: ReadonlyMap<string, KeyObject>): JWTPayload | undefined {
  const dot1 = token.indexOf('.');
  if (dot1 < 0) return undefined;
  const key = keyByHeader.get(token.slice(0, dot1));
  if (key === undefined) return undefined;
  const dot2 = token.indexOf('.', dot1 + 1);
  // Compact serialisation: exactly three segments.
  if (dot2 < 0 || token.indexOf('.', dot2 + 1) >= 0) throw new CredentialRefused('malformed');
  const signature = Buffer.from(token.slice(dot2 + 1), 'base64url');
  const expected = hs256(key, token.slice(0, dot2));
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) throw new CredentialRefused('bad_signature');
  let payload: unknown;
  try {
    payload = JSON.parse(utf8.decode(Buffer.from(token.slice(dot1 + 1, dot2), 'base64url')));
  } catch {
    // As jose: not JSON is not a claims set.
  }
  if (!isPlainObject(payload)) throw new CredentialRefused('malformed');
  // Presence, in jose's order (the audience first); a missing `aud` is the wrong audience.
  if (!('aud' in payload)) throw new CredentialRefused('wrong_audience');
  if (!('iat' in payload) || !('exp' in payload) || !('iss' in payload)) throw new CredentialRefused('malformed');
  const { aud } = payload;
  if (!(typeof aud === 'string' ? aud === service : Array.isArray(aud) && aud.includes(service))) throw new CredentialRefused('wrong_audience');
  // As jose reads the clock (a new Date, not Date.now).
  const now = Math.floor(new Date().getTime() / 1000);
  if (typeof payload.iat !== 'number') throw new CredentialRefused('malformed');
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > now + CLOCK_TOLERANCE_SECONDS)) throw new CredentialRefused('malformed');
  if (typeof payload.exp !== 'number') throw new CredentialRefused('malformed');
  if (payload.exp <= now - CLOCK_TOLERANCE_SECONDS) throw new CredentialRefused('expired');
  return payload as JWTPayload;
}

/** This system's own rules on a verified claims set: who calls, for whom, the request id, the lifetime. */
function callerClaimsOf(payload: JWTPayload): CallerClaims {
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
}

/**
 * Checks the credentials sent to `service`. Every token this system's signers make has one of the
 * ring's known protected headers and is verified at once with node's crypto (verifyNow), without
 * jose's async layers: about a quarter of the CPU (docs/security.md). Any other token goes through
 * jose, which also decides what such a header means. `joseOnly` sends every token through jose (the
 * reference the tests compare with).
 */
export function createCredentialVerifier(opts: { service: string; ring: InternalKeyRing; joseOnly?: boolean }): CredentialVerifier {
  const { service, ring } = opts;
  const keyByHeader = new Map<string, KeyObject>(opts.joseOnly ? [] : [...ring.byKid].map(([kid, key]) => [encodedHeaderOf(kid), key]));
  const verifyNow = (header: string | undefined): CallerClaims | undefined => {
    const payload = verifyKnownHeader(tokenOf(header), service, keyByHeader);
    return payload === undefined ? undefined : callerClaimsOf(payload);
  };
  return {
    service,
    verifyNow,
    async verify(header) {
      return verifyNow(header) ?? callerClaimsOf(await verifyWithJose(tokenOf(header), service, ring));
    },
  };
}
