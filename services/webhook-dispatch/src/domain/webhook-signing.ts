import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** decisions.md §11: `whsec_<base64 of 24+ random bytes>`; 32 bytes, the HMAC-SHA256 block-sized key. */
export const SECRET_PREFIX = 'whsec_';
export const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** An endpoint's secrets (in any form: plain, sealed). */
export interface SigningSecrets<S = string> {
  current: S;
  /** The secret before the last rotation, still signing until `previousExpiresAt`. */
  previous: S | null;
  previousExpiresAt: Date | null;
}

/** The secrets that sign an attempt made at `now`: the current one, plus the previous one during the overlap. */
export function activeSecrets<S>(s: SigningSecrets<S>, now: Date): S[] {
  const previousValid = s.previous !== null && s.previousExpiresAt !== null && s.previousExpiresAt.getTime() > now.getTime();
  return previousValid ? [s.current, s.previous!] : [s.current];
}

/**
 * The HMAC key of a `whsec_` secret, as the `standardwebhooks` package reads it (the prefix dropped, the
 * rest base64-decoded), held as a node KeyObject so that signing neither decodes it again nor copies it
 * into a JavaScript HMAC. An empty key throws, as in the package. Only canonical base64 is read (what
 * generateWebhookSecret makes: the service makes every secret itself, none comes from outside); the
 * package's decoder also reads unpadded and non-canonical spellings, Buffer's reads anything, so
 * anything else throws rather than being read differently.
 */
export function signingKey(secret: string): KeyObject {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const raw = Buffer.from(encoded, 'base64');
  if (raw.length === 0) throw new Error("Secret can't be empty.");
  if (raw.toString('base64') !== encoded) throw new Error('Secret is not base64.');
  return createSecretKey(raw);
}

/**
 * One Standard Webhooks signature: `v1,` + base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}` (UTF-8),
 * byte for byte what `new Webhook(secret).sign(id, now, body)` of the `standardwebhooks` package writes
 * (test/webhook-signing.test.ts compares them), with node's own HMAC: the package hashes in JavaScript
 * (fast-sha256) after decoding the secret again on every call.
 */
export function signWebhook(key: KeyObject, webhookId: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${webhookId}.${timestamp}.`).update(body).digest('base64')}`;
}

/**
 * Standard Webhooks headers for one attempt. The timestamp is the attempt's own (receivers refuse
 * ones older than 5 minutes, and a retry may come hours later); the id and body never change.
 * Several signatures are space-separated, as the standard allows, so a receiver holding either the
 * old or the new secret verifies during a rotation. `keys` are the active secrets' signingKey, in the
 * order of activeSecrets.
 */
export function webhookHeaders(keys: readonly KeyObject[], webhookId: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signature = keys.length === 1 ? signWebhook(keys[0]!, webhookId, timestamp, body) : keys.map((key) => signWebhook(key, webhookId, timestamp, body)).join(' ');
  return {
    'content-type': 'application/json',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  };
}
