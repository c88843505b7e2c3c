import { randomBytes } from 'node:crypto';
import { createSecretBox, SecretsError } from '../src';

const key = () => randomBytes(32).toString('base64');

describe('secret box', () => {
  it('seals so that the plaintext is not visible and opens it back', () => {
    const box = createSecretBox({ key: key() });
    const sealed = box.seal('hunter2-calendar-password', 'cal_1');
    expect(sealed).not.toContain('hunter2');
    expect(Buffer.from(sealed.split('.')[3]!, 'base64url').toString()).not.toContain('hunter2');
    expect(box.open(sealed, 'cal_1')).toBe('hunter2-calendar-password');
    expect(box.seal('same', 'x')).not.toBe(box.seal('same', 'x'));
  });

  it('refuses a value bound to other associated data, tampered, or sealed under an unknown key', () => {
    const box = createSecretBox({ key: key() });
    const sealed = box.seal('s', 'cal_1');
    expect(() => box.open(sealed, 'cal_2')).toThrow(SecretsError);
    const parts = sealed.split('.');
    // Flip a bit of the ciphertext: replacing it with a fixed byte left it unchanged 1 time in 256 (the
    // one-byte ciphertext of 's' happened to be that byte), and the test then failed for no fault.
    const ciphertext = Buffer.from(parts[3]!, 'base64url');
    ciphertext[0] = ciphertext[0]! ^ 0x01;
    parts[3] = ciphertext.toString('base64url');
    expect(() => box.open(parts.join('.'), 'cal_1')).toThrow(SecretsError);
    expect(() => createSecretBox({ key: key() }).open(sealed, 'cal_1')).toThrow(SecretsError);
  });

  it('reads values sealed under a rotated-out key that is still configured', () => {
    const old = key();
    const sealed = createSecretBox({ key: old, keyId: 'k1' }).seal('s');
    const rotated = createSecretBox({ key: key(), keyId: 'k2', oldKeys: `k1:${old}` });
    expect(rotated.open(sealed)).toBe('s');
    expect(rotated.seal('s').split('.')[1]).toBe('k2');
  });

  it('rejects a key that is not 32 bytes', () => {
    expect(() => createSecretBox({ key: Buffer.from('short').toString('base64') })).toThrow(/32 bytes/);
  });
});
