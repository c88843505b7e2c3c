import { combineEventTypesListParams, listEventTypesBodySchema, listEventTypesQuerySchema, listSlotsQuerySchema } from '../src';
import { details, ok } from './helpers';

describe('GET /v1/event-types body and query', () => {
  it('body: limit 1 and 100 ok, 0 and 101 out_of_range, cursor up to 2048', () => {
    ok(listEventTypesBodySchema, {});
    ok(listEventTypesBodySchema, { limit: 1, cursor: 'c'.repeat(2048) });
    ok(listEventTypesBodySchema, { limit: 100 });
    expect(details(listEventTypesBodySchema, { limit: 0 })).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(details(listEventTypesBodySchema, { limit: 101 })).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(details(listEventTypesBodySchema, { limit: '10' })).toEqual([{ field: 'limit', issue: 'invalid_type' }]);
    expect(details(listEventTypesBodySchema, { cursor: 'c'.repeat(2049) })).toEqual([{ field: 'cursor', issue: 'too_long' }]);
    expect(details(listEventTypesBodySchema, { status: 'active' })).toEqual([{ field: 'status', issue: 'unknown_field' }]);
  });

  it('query: the same rules with limit as a string', () => {
    expect(listEventTypesQuerySchema.parse({ limit: '100' })).toEqual({ limit: 100 });
    expect(details(listEventTypesQuerySchema, { limit: '101' })).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(details(listEventTypesQuerySchema, { limit: '1.5' })).toEqual([{ field: 'limit', issue: 'invalid_format' }]);
    expect(details(listEventTypesQuerySchema, { cursor: 'c'.repeat(2049) })).toEqual([{ field: 'cursor', issue: 'too_long' }]);
  });

  it('combining takes either place and refuses different values in both', () => {
    expect(combineEventTypesListParams({ limit: 5 }, undefined)).toEqual({ ok: true, value: { limit: 5 } });
    expect(combineEventTypesListParams({}, { cursor: 'c', limit: 7 })).toEqual({ ok: true, value: { cursor: 'c', limit: 7 } });
    expect(combineEventTypesListParams({ limit: 7 }, { limit: 7 })).toEqual({ ok: true, value: { limit: 7 } });
    expect(combineEventTypesListParams({ limit: 5, cursor: 'a' }, { limit: 7, cursor: 'a' })).toEqual({
      ok: false,
      details: [{ field: 'limit', issue: 'conflict' }],
    });
  });
});

describe('GET /v1/event-types/{eventType}/slots query', () => {
  const q = (from: string, to: string, timezone = 'Europe/Paris') => ({ from, to, timezone });

  it('allows 62 dates (to - from = 61 days) and refuses 63 on `to`', () => {
    ok(listSlotsQuerySchema, q('2026-03-01', '2026-05-01'));
    expect(details(listSlotsQuerySchema, q('2026-03-01', '2026-05-02'))).toEqual([{ field: 'to', issue: 'out_of_range' }]);
  });

  it('allows one date and refuses `to` before `from`', () => {
    ok(listSlotsQuerySchema, q('2026-03-01', '2026-03-01'));
    expect(details(listSlotsQuerySchema, q('2026-03-02', '2026-03-01'))).toEqual([{ field: 'to', issue: 'out_of_range' }]);
  });

  it('refuses impossible dates and unknown time zones', () => {
    expect(details(listSlotsQuerySchema, q('2026-02-30', '2026-03-01'))).toEqual([{ field: 'from', issue: 'invalid_format' }]);
    expect(details(listSlotsQuerySchema, q('2026-03-01', '2026-3-2'))).toEqual([{ field: 'to', issue: 'invalid_format' }]);
    expect(details(listSlotsQuerySchema, q('2026-03-01', '2026-03-02', 'Mars/Olympus'))).toEqual([{ field: 'timezone', issue: 'invalid_value' }]);
  });

  it('requires from, to and timezone and refuses unknown parameters', () => {
    expect(details(listSlotsQuerySchema, {})).toEqual([
      { field: 'from', issue: 'required' },
      { field: 'to', issue: 'required' },
      { field: 'timezone', issue: 'required' },
    ]);
    expect(details(listSlotsQuerySchema, { ...q('2026-03-01', '2026-03-02'), limit: '5' })).toEqual([{ field: 'limit', issue: 'unknown_field' }]);
  });

  it('keeps dates as strings', () => {
    expect(listSlotsQuerySchema.parse(q('2026-03-01', '2026-03-02', 'UTC'))).toEqual(q('2026-03-01', '2026-03-02', 'UTC'));
  });
});
