import { metadataSchema } from '../src';
import { details, ok } from './helpers';

const withKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

describe('metadata bounds', () => {
  it('allows 50 keys and refuses 51 with too_many_keys', () => {
    ok(metadataSchema, withKeys(50));
    expect(details(metadataSchema, withKeys(51))).toEqual([{ field: '', issue: 'too_many_keys' }]);
  });

  it('allows key names of 1 to 40 characters', () => {
    ok(metadataSchema, { a: 1, ['k'.repeat(40)]: 1 });
    expect(details(metadataSchema, { ['k'.repeat(41)]: 1 })).toEqual([{ field: '', issue: 'key_too_long' }]);
    expect(details(metadataSchema, { '': 1 })).toEqual([{ field: '', issue: 'key_too_short' }]);
  });

  it('allows depth 3 and refuses depth 4 with too_deep', () => {
    ok(metadataSchema, {});
    ok(metadataSchema, { a: { b: { c: 1 } } });
    ok(metadataSchema, { a: [[1, 'x', null, true]] });
    ok(metadataSchema, { a: [{ b: 'x' }] });
    expect(details(metadataSchema, { a: { b: { c: {} } } })).toEqual([{ field: '', issue: 'too_deep' }]);
    expect(details(metadataSchema, { a: [[[1]]] })).toEqual([{ field: '', issue: 'too_deep' }]);
  });

  it('survives a very deep value without a stack overflow', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(details(metadataSchema, { a: deep })).toEqual([{ field: '', issue: 'too_deep' }]);
  });

  it('allows exactly 8192 bytes of JSON and refuses 8193 with too_large', () => {
    const overhead = JSON.stringify({ k: '' }).length; // {"k":""}
    ok(metadataSchema, { k: 'x'.repeat(8192 - overhead) });
    expect(details(metadataSchema, { k: 'x'.repeat(8193 - overhead) })).toEqual([{ field: '', issue: 'too_large' }]);
  });

  it('counts bytes of UTF-8, not characters', () => {
    const overhead = JSON.stringify({ k: '' }).length;
    const euros = Math.floor((8192 - overhead) / 3); // € is 3 bytes
    ok(metadataSchema, { k: '€'.repeat(euros) });
    expect(details(metadataSchema, { k: '€'.repeat(euros + 1) })).toEqual([{ field: '', issue: 'too_large' }]);
  });

  it('refuses what is not a JSON object', () => {
    expect(details(metadataSchema, [])).toEqual([{ field: '', issue: 'invalid_type' }]);
    expect(details(metadataSchema, 'x')).toEqual([{ field: '', issue: 'invalid_type' }]);
    expect(details(metadataSchema, null)).toEqual([{ field: '', issue: 'invalid_type' }]);
    expect(details(metadataSchema, { a: NaN })).toEqual([{ field: '', issue: 'invalid_type' }]);
    expect(details(metadataSchema, { a: new Date() })).toEqual([{ field: '', issue: 'invalid_type' }]);
  });

  it('returns the object unchanged', () => {
    const m = { order: 'A-17', tags: ['x', 'y'], nested: { n: 1, deeper: { ok: true } } };
    expect(metadataSchema.parse(m)).toEqual(m);
  });

  it('reports each broken bound', () => {
    const big = { ...withKeys(51), ['k'.repeat(41)]: { a: { b: {} } } };
    expect(details(metadataSchema, big).map((d) => d.issue)).toEqual(['too_many_keys', 'key_too_long', 'too_deep']);
  });
});
