import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Encryption at rest for secrets a service must be able to read back (calendar passwords, webhook
 * signing secrets, stored idempotent responses that carry a credential). AES-256-GCM with a random
 * 96-bit nonce per value; the output names its key id so keys can be rotated: new values use the
 * current key, old values stay readable while their key is still configured.
 *
 * Keys come from the environment: SECRETS_KEY (base64 of 32 bytes) and optionally SECRETS_OLD_KEYS
 * (comma-separated `id:base64`). Format of a sealed value: `v1.<keyId>.<nonce>.<ciphertext>.<tag>` (base64url).
 */
export interface SecretBox {
  seal(plaintext: string, associatedData?: string): string;
  open(sealed: string, associatedData?: string): string;
}

export class SecretsError extends Error {}

function parseKey(b64: string, what: string): Buffer {
  const key = Buffer.from(b64, 'base64');
  if (key.length !== 32) throw new SecretsError(`${what} must be base64 of exactly 32 bytes`);
  return key;
}

export function createSecretBox(opts: { key: string; keyId?: string; oldKeys?: string }): SecretBox {
  const currentId = opts.keyId ?? 'k1';
  const keys = new Map<string, Buffer>([[currentId, parseKey(opts.key, 'SECRETS_KEY')]]);
  for (const entry of (opts.oldKeys ?? '').split(',').filter(Boolean)) {
    const [id, b64] = entry.split(':');
    if (!id || !b64) throw new SecretsError('SECRETS_OLD_KEYS entries must be id:base64');
    keys.set(id, parseKey(b64, `SECRETS_OLD_KEYS ${id}`));
  }
  const current = keys.get(currentId)!;

  return {
    seal(plaintext, associatedData = '') {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current, nonce);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', currentId, nonce.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, associatedData = '') {
      const [v, keyId, nonce, ct, tag] = sealed.split('.');
      const key = keyId ? keys.get(keyId) : undefined;
      if (v !== 'v1' || !key || nonce === undefined || ct === undefined || tag === undefined) throw new SecretsError('sealed value is malformed or its key is not configured');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(associatedData, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretsError('sealed value failed authentication');
      }
    },
  };
}
