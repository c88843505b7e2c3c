import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** decisions.md §11: `whsec_<base64 of 24+ random bytes>`; 32 bytes, the HMAC-SHA256 block-sized key. */
export const SECRET_PREFIX = 'whsec_';
export const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export interface SigningSecrets {
  current: string;
  /** The secret before the last rotation, still signing until `previousExpiresAt`. */
  previous: string | null;
  previousExpiresAt: Date | null;
}

/** The secrets that sign an attempt made at `now`: the current one, plus the previous one during the overlap. */
export function activeSecrets(s: SigningSecrets, now: Date): string[] {
  const previousValid = s.previous !== null && s.previousExpiresAt !== null && s.previousExpiresAt.getTime() > now.getTime();
  return previousValid ? [s.current, s.previous!] : [s.current];
}

/**
 * Standard Webhooks headers for one attempt. The timestamp is the attempt's own (receivers refuse
 * ones older than 5 minutes, and a retry may come hours later); the id and body never change.
 * Several signatures are space-separated, as the standard allows, so a receiver holding either the
 * old or the new secret verifies during a rotation.
 */
export function webhookHeaders(secrets: readonly string[], webhookId: string, body: string, now: Date): Record<string, string> {
  const signature = secrets.map((secret) => new Webhook(secret).sign(webhookId, now, body)).join(' ');
  return {
    'content-type': 'application/json',
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signature,
  };
}
