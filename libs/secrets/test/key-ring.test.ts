import { randomBytes } from 'node:crypto';
import { createSecretBox, KeyRingError, parseKeyRing, sealedKeyId, secretBoxFromEnv, secretsEnvProblem, SecretsError, UnknownKeyIdError } from '../src';

const key = () => randomBytes(32).toString('base64');

describe('SECRETS_KEYS key ring', () => {
  const k1 = key();
  const k2 = key();

  it('seals with the first key and opens with every key of the ring', () => {
    const before = secretBoxFromEnv({ SECRETS_KEYS: `k1:${k1}` });
    const old = before.seal('calendar-password', 'cal_1');
    expect(sealedKeyId(old)).toBe('k1');

    const ring = secretBoxFromEnv({ SECRETS_KEYS: `k2:${k2},k1:${k1}` });
    expect(ring.currentKeyId).toBe('k2');
    expect(ring.keyIds).toEqual(['k2', 'k1']);
    const fresh = ring.seal('webhook-secret', 'whe_1');
    expect(sealedKeyId(fresh)).toBe('k2');
    expect(ring.open(old, 'cal_1')).toBe('calendar-password');
    expect(ring.open(fresh, 'whe_1')).toBe('webhook-secret');
    // A ring that still lists k2 second reads what the new ring sealed (the two-step roll of the runbook).
    expect(secretBoxFromEnv({ SECRETS_KEYS: `k1:${k1},k2:${k2}` }).open(fresh, 'whe_1')).toBe('webhook-secret');
  });

  it('names the key id of a value whose key is not in the ring, and nothing secret', () => {
    const sealed = secretBoxFromEnv({ SECRETS_KEYS: `k0:${k1}` }).seal('hunter2', 'cal_1');
    const ring = secretBoxFromEnv({ SECRETS_KEYS: `k2:${k2},k1:${k1}` });
    let thrown: unknown;
    try {
      ring.open(sealed, 'cal_1');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UnknownKeyIdError);
    expect(thrown).toBeInstanceOf(SecretsError);
    expect((thrown as UnknownKeyIdError).keyId).toBe('k0');
    const message = (thrown as Error).message;
    expect(message).toBe('sealed value uses key id "k0", which is not in SECRETS_KEYS (the ring has "k2", "k1")');
    for (const secret of ['hunter2', k1, k2, sealed]) expect(message).not.toContain(secret);
  });

  it('names the key id when a value fails authentication, and refuses malformed values without echoing them', () => {
    const ring = secretBoxFromEnv({ SECRETS_KEYS: `k1:${k1}` });
    const sealed = ring.seal('s', 'whe_1');
    expect(() => ring.open(sealed, 'whe_2')).toThrow(/failed authentication under key id "k1"/);
    // The same id with another key (a ring rebuilt by mistake) is an authentication failure, not a silent garbage read.
    expect(() => secretBoxFromEnv({ SECRETS_KEYS: `k1:${k2}` }).open(sealed, 'whe_1')).toThrow(/failed authentication under key id "k1"/);
    expect(() => ring.open('plain-text-password', 'x')).toThrow(/malformed/);
    expect(() => ring.open('v1.not a valid id.a.b.c', 'x')).toThrow(/^sealed value is malformed/);
    expect(() => ring.open('v1.not a valid id.a.b.c', 'x')).not.toThrow(/not a valid id/);
  });

  it('stops at start-up on a malformed ring, saying what is wrong without printing key material', () => {
    const bad: Array<[string, RegExp]> = [
      ['', /SECRETS_KEYS: required/],
      [`k1:${k1},k1:${k2}`, /SECRETS_KEYS: key id "k1" appears twice/],
      ['k1:not base64!!', /SECRETS_KEYS: the key of "k1" is not valid base64/],
      [`k1:${Buffer.alloc(16).toString('base64')}`, /SECRETS_KEYS: the key of "k1" must be base64 of exactly 32 bytes \(it decodes to 16\)/],
      [k1, /SECRETS_KEYS: entry 1 is not <key id>:<base64 of 32 bytes>/],
      [`${k1}:k1`, /SECRETS_KEYS: entry 1: the key id must be 1 to 16 of/],
      [`k2:${k2},,k1:${k1}`, /SECRETS_KEYS: entry 2 is empty/],
      [`bad.id:${k1}`, /entry 1: the key id must be/],
    ];
    for (const [value, expected] of bad) {
      const problem = secretsEnvProblem({ SECRETS_KEYS: value });
      expect(problem).not.toBeNull();
      expect(`${problem!.variable}: ${problem!.message}`).toMatch(expected);
      for (const material of [k1, k2]) expect(problem!.message).not.toContain(material);
      expect(() => parseKeyRing({ SECRETS_KEYS: value })).toThrow(KeyRingError);
    }
    // Spaces around entries and a trailing comma are fine.
    expect(parseKeyRing({ SECRETS_KEYS: ` k2:${k2} , k1:${k1},` }).ids).toEqual(['k2', 'k1']);
    // URL-safe base64 is accepted too.
    expect(parseKeyRing({ SECRETS_KEYS: `k1:${Buffer.from(k1, 'base64').toString('base64url')}` }).ids).toEqual(['k1']);
  });

  it('keeps reading the old SECRETS_KEY (+ SECRETS_OLD_KEYS): the same ring with the current key as k1', () => {
    const legacy = secretBoxFromEnv({ SECRETS_KEY: k1 });
    expect(legacy.currentKeyId).toBe('k1');
    const sealed = legacy.seal('s', 'a');
    expect(sealedKeyId(sealed)).toBe('k1');
    // An existing deployment moving to the ring: its values name k1, which SECRETS_KEYS then lists.
    expect(secretBoxFromEnv({ SECRETS_KEYS: `k2:${k2},k1:${k1}` }).open(sealed, 'a')).toBe('s');

    const rotatedTheOldWay = secretBoxFromEnv({ SECRETS_KEY: k2, SECRETS_KEY_ID: 'k2', SECRETS_OLD_KEYS: `k1:${k1}` });
    expect(rotatedTheOldWay.keyIds).toEqual(['k2', 'k1']);
    expect(rotatedTheOldWay.open(sealed, 'a')).toBe('s');
    expect(createSecretBox({ key: k1 }).open(sealed, 'a')).toBe('s');
    expect(() => rotatedTheOldWay.open(secretBoxFromEnv({ SECRETS_KEYS: `k9:${key()}` }).seal('x'))).toThrow(
      'sealed value uses key id "k9", which is not in SECRETS_KEY (the ring has "k2", "k1")',
    );

    expect(secretsEnvProblem({ SECRETS_KEY: k1, SECRETS_OLD_KEYS: `k1:${k2}` })).toEqual({ variable: 'SECRETS_OLD_KEYS', message: 'key id "k1" appears twice; every key needs its own id' });
    expect(secretsEnvProblem({ SECRETS_KEY: 'short' })?.variable).toBe('SECRETS_KEY');
    expect(secretsEnvProblem({ SECRETS_OLD_KEYS: `k1:${k1}` })?.message).toMatch(/required.*SECRETS_OLD_KEYS alone is not enough/);
  });

  it('refuses both spellings at once, so a rotation is never half applied', () => {
    expect(secretsEnvProblem({ SECRETS_KEYS: `k2:${k2}`, SECRETS_KEY: k1 })).toEqual({
      variable: 'SECRETS_KEYS',
      message: 'replaces SECRETS_KEY, SECRETS_KEY_ID and SECRETS_OLD_KEYS; set only SECRETS_KEYS (also set: SECRETS_KEY)',
    });
    // Empty strings count as unset, as in every service's config.
    expect(secretsEnvProblem({ SECRETS_KEYS: `k2:${k2}`, SECRETS_KEY: '' })).toBeNull();
  });
});
