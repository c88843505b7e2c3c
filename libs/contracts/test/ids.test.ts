import { ID_PREFIX_LIST, idSchema, isId, newId } from '../src';

describe('identifiers', () => {
  it('when many ids are made, every one is different and carries its prefix', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20_000; i++) ids.add(newId('bkg'));
    expect(ids.size).toBe(20_000);
    for (const id of ids) expect(id.startsWith('bkg_')).toBe(true);
  });

  it('carries at least 96 random bits, URL-safe and without padding', () => {
    const id = newId('wev');
    const random = id.slice('wev_'.length);
    expect(random).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(random, 'base64url').length * 8).toBeGreaterThanOrEqual(96);
    expect(id.length).toBeLessThanOrEqual(40);
  });

  it('isId accepts an id of its own kind only', () => {
    for (const p of ID_PREFIX_LIST) expect(isId(p, newId(p))).toBe(true);
    expect(isId('bkg', newId('evt'))).toBe(false);
    expect(isId('bkg', 'bkg_')).toBe(false);
    expect(isId('bkg', 'bkg_short')).toBe(false);
    expect(isId('bkg', `bkg_${'a'.repeat(37)}`)).toBe(false);
    expect(isId('bkg', `bkg_abc/defghijklmnopqrstu`)).toBe(false);
    expect(isId('bkg', 42)).toBe(false);
  });

  it('idSchema checks the prefix', () => {
    expect(idSchema('hst').safeParse(newId('hst')).success).toBe(true);
    expect(idSchema('hst').safeParse(newId('bkg')).success).toBe(false);
  });

  it('knows the prefixes later services need', () => {
    expect(ID_PREFIX_LIST).toEqual(expect.arrayContaining(['biv', 'bkg', 'evt', 'hst', 'wsp', 'key', 'whe', 'wev', 'req', 'cal', 'whd']));
  });
});
