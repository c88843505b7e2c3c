import { randomBytes } from 'node:crypto';
import { createSecretBox, SecretsError, withOpenCache, type SecretBox } from '../src';

const key = () => randomBytes(32).toString('base64');

/** A box that counts the opens that reach it. */
function counting(box: SecretBox): SecretBox & { opens: number } {
  const counted = {
    opens: 0,
    currentKeyId: box.currentKeyId,
    keyIds: box.keyIds,
    seal: box.seal,
    open(sealed: string, aad?: string) {
      counted.opens += 1;
      return box.open(sealed, aad);
    },
  };
  return counted;
}

describe('withOpenCache', () => {
  it('opens a sealed value once and answers again from memory, per associated data', () => {
    const inner = counting(createSecretBox({ key: key() }));
    const box = withOpenCache(inner);
    const sealed = inner.seal('whsec-endpoint-secret', 'whe_1');
    expect(box.open(sealed, 'whe_1')).toBe('whsec-endpoint-secret');
    expect(box.open(sealed, 'whe_1')).toBe('whsec-endpoint-secret');
    expect(inner.opens).toBe(1);
    // Other associated data is another entry, and the box still refuses it.
    expect(() => box.open(sealed, 'whe_2')).toThrow(SecretsError);
    expect(() => box.open(sealed, 'whe_2')).toThrow(SecretsError);
    expect(inner.opens).toBe(3); // failures are not remembered
    // A value sealed again (new secret, or a rotation) is opened afresh.
    const resealed = inner.seal('whsec-endpoint-secret', 'whe_1');
    expect(box.open(resealed, 'whe_1')).toBe('whsec-endpoint-secret');
    expect(inner.opens).toBe(4);
    expect(box.currentKeyId).toBe(inner.currentKeyId);
    expect(box.open(box.seal('x', 'a'), 'a')).toBe('x');
  });

  it('keeps at most maxEntries values, the least recently used going first', () => {
    const inner = counting(createSecretBox({ key: key() }));
    const box = withOpenCache(inner, { maxEntries: 2 });
    const [a, b, c] = ['a', 'b', 'c'].map((s) => inner.seal(s));
    box.open(a!);
    box.open(b!);
    box.open(a!); // a used last
    box.open(c!); // b goes
    expect(inner.opens).toBe(3);
    box.open(a!);
    box.open(c!);
    expect(inner.opens).toBe(3);
    box.open(b!);
    expect(inner.opens).toBe(4);
  });
});
