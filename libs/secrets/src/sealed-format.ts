import { KEY_ID_PATTERN } from './key-ring';

/** Version tag of `v1.<keyId>.<nonce>.<ciphertext>.<tag>`. */
export const SEALED_VERSION = 'v1';

/** The key id a sealed value names, or null when it is not a sealed value of this format. */
export function sealedKeyId(sealed: string): string | null {
  const parts = sealed.split('.');
  if (parts.length !== 5 || parts[0] !== SEALED_VERSION || !KEY_ID_PATTERN.test(parts[1]!)) return null;
  return parts[1]!;
}
