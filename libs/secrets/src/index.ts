import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { parseKeyRing, SecretsError, type KeyRing, type SecretsEnv } from './key-ring';
import { SEALED_VERSION, sealedKeyId } from './sealed-format';

export { checkSecretsEnv, KEY_ID_PATTERN, KeyRingError, parseKeyRing, secretsEnvProblem, SecretsError, type KeyRing, type SecretsEnv } from './key-ring';
export { sealedKeyId } from './sealed-format';
export {
  rotateSealedValues,
  sealedValuesOut,
  sealedValuesStatus,
  type RotateOptions,
  type SealedColumnReport,
  type SealedColumns,
  type SealedValuesReport,
  type SqlPool,
} from './rotation';

/**
 * Encryption at rest for secrets a service must be able to read back (calendar passwords, webhook
 * signing secrets, stored idempotent responses that carry a credential). AES-256-GCM with a random
 * 96-bit nonce per value; the output names its key id so keys can be rotated: new values use the
 * current key, old values stay readable while their key is still in the ring.
 *
 * Keys come from the environment as a key ring (key-ring.ts): `SECRETS_KEYS="k2:<base64>,k1:<base64>"`,
 * the first seals, all open; the older `SECRETS_KEY` (+ `SECRETS_KEY_ID`, `SECRETS_OLD_KEYS`) is the
 * same ring spelled the old way. Format of a sealed value: `v1.<keyId>.<nonce>.<ciphertext>.<tag>`
 * (base64url). `pnpm admin secrets rotate` re-seals stored values under the current key (rotation.ts).
 */
export interface SecretBox {
  seal(plaintext: string, associatedData?: string): string;
  open(sealed: string, associatedData?: string): string;
  /** The id new values are sealed under. */
  readonly currentKeyId: string;
  /** Every id the box can open, the current one first. */
  readonly keyIds: readonly string[];
}

/** Opening a value whose key id is not in the ring: names the id (never a key or the plaintext). */
export class UnknownKeyIdError extends SecretsError {
  override name = 'UnknownKeyIdError';
  constructor(
    readonly keyId: string,
    ring: Pick<KeyRing, 'ids' | 'variable'>,
  ) {
    super(`sealed value uses key id "${keyId}", which is not in ${ring.variable} (the ring has ${ring.ids.map((id) => `"${id}"`).join(', ')})`);
  }
}

const VERSION = SEALED_VERSION;

/** `{ key, keyId?, oldKeys? }`: SECRETS_KEY, SECRETS_KEY_ID and SECRETS_OLD_KEYS; `{ keys }`: SECRETS_KEYS. */
export type SecretBoxOptions = { key: string; keyId?: string; oldKeys?: string } | { keys: string } | { ring: KeyRing };

function ringOf(opts: SecretBoxOptions): KeyRing {
  if ('ring' in opts) return opts.ring;
  if ('keys' in opts) return parseKeyRing({ SECRETS_KEYS: opts.keys });
  return parseKeyRing({ SECRETS_KEY: opts.key, SECRETS_KEY_ID: opts.keyId, SECRETS_OLD_KEYS: opts.oldKeys });
}

export function createSecretBox(opts: SecretBoxOptions): SecretBox {
  const ring = ringOf(opts);
  const currentId = ring.currentId;
  const current = ring.key(currentId)!;

  return {
    currentKeyId: currentId,
    keyIds: ring.ids,
    seal(plaintext, associatedData = '') {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current, nonce);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, currentId, nonce.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, associatedData = '') {
      const keyId = sealedKeyId(sealed);
      if (keyId === null) throw new SecretsError(`sealed value is malformed (expected ${VERSION}.<key id>.<nonce>.<ciphertext>.<tag>)`);
      const key = ring.key(keyId);
      if (!key) throw new UnknownKeyIdError(keyId, ring);
      const [, , nonce, ct, tag] = sealed.split('.') as [string, string, string, string, string];
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(associatedData, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretsError(`sealed value failed authentication under key id "${keyId}" (another key under that id, an altered value, or other associated data)`);
      }
    },
  };
}

/** The SecretBox of a service: its ring from the environment (SECRETS_KEYS, or SECRETS_KEY as before). */
export function secretBoxFromEnv(env: SecretsEnv): SecretBox {
  return createSecretBox({ ring: parseKeyRing(env) });
}
export { withOpenCache } from './open-cache';
