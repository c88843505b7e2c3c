import { newId } from '@sched/contracts';
import { buildOpenApiDocument, createResponseValidator } from '../src';
import { makeBooking, okHeaders, REQUEST_ID } from './fixtures';

const { validate } = createResponseValidator(buildOpenApiDocument());
const meta = { request_id: REQUEST_ID };

function errorBody(code: string, details: unknown[] = []) {
  return { error: { code, message: 'Something went wrong.', details }, meta };
}

describe('createResponseValidator', () => {
  it('accepts a correct booking answer: 201 of create, 200 of read on the actual path, and a page of the list', () => {
    expect(validate({ method: 'POST', path: '/v1/bookings', status: 201, headers: okHeaders, body: { data: makeBooking(), meta } })).toEqual([]);
    const booking = makeBooking();
    expect(validate({ method: 'GET', path: `/v1/bookings/${booking.id}`, status: 200, headers: okHeaders, body: { data: booking, meta } })).toEqual([]);
    expect(
      validate({
        method: 'GET',
        path: '/v1/bookings?limit=2',
        status: 200,
        headers: new Headers(okHeaders),
        body: { data: [makeBooking(), makeBooking()], meta: { ...meta, next_cursor: null } },
      }),
    ).toEqual([]);
  });

  it('reports a missing field of the Booking', () => {
    const { guest: _guest, ...withoutGuest } = makeBooking({ metadata: { order: 'A-17' } });
    const problems = validate({ method: 'POST', path: '/v1/bookings', status: 201, headers: okHeaders, body: { data: withoutGuest, meta } });
    expect(problems).toEqual(['POST /v1/bookings 201: body/data: missing property "guest"']);
  });

  it('reports a field the contract does not have (an internal field leaking)', () => {
    const problems = validate({ method: 'POST', path: '/v1/bookings', status: 201, headers: okHeaders, body: { data: { ...makeBooking(), access: 'public' }, meta } });
    expect(problems).toEqual(['POST /v1/bookings 201: body/data: unexpected property "access"']);
  });

  it('reports a value of the wrong form (timestamp without milliseconds, unknown status)', () => {
    const data = { ...makeBooking(), start_at: '2026-11-22T09:30:00Z', status: 'pending' };
    const problems = validate({ method: 'GET', path: `/v1/bookings/${data.id}`, status: 200, headers: okHeaders, body: { data, meta } });
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toMatch(/body\/data\/start_at/);
    expect(problems.join('\n')).toMatch(/body\/data\/status.*confirmed/);
  });

  it('reports a status the operation does not document (200 for a create, 409 on a read)', () => {
    expect(validate({ method: 'POST', path: '/v1/bookings', status: 200, headers: okHeaders, body: { data: makeBooking(), meta } })).toEqual([
      expect.stringMatching(/^POST \/v1\/bookings: status 200 is not documented for POST \/v1\/bookings \(documented: 201, 400, .*\)$/),
    ]);
    expect(validate({ method: 'GET', path: '/v1/bookings/bkg_x', status: 409, headers: okHeaders, body: errorBody('slot_unavailable') })).toEqual([
      expect.stringContaining('status 409 is not documented'),
    ]);
  });

  it('accepts a documented error envelope with a code of its status', () => {
    expect(validate({ method: 'POST', path: '/v1/bookings', status: 409, headers: okHeaders, body: errorBody('slot_unavailable') })).toEqual([]);
    const details = [{ field: 'expected_version', issue: 'current_version_3' }];
    expect(validate({ method: 'POST', path: '/v1/bookings/bkg_x/cancel', status: 409, headers: okHeaders, body: errorBody('version_conflict', details) })).toEqual([]);
    expect(
      validate({ method: 'GET', path: '/v1/bookings', status: 429, headers: { ...okHeaders, 'retry-after': '3' }, body: errorBody('rate_limited') }),
    ).toEqual([]);
  });

  it('reports a wrong error envelope: a code of another status, missing details, an extra field, a success body', () => {
    expect(validate({ method: 'POST', path: '/v1/bookings', status: 409, headers: okHeaders, body: errorBody('not_found') })).toEqual([
      expect.stringMatching(/body\/error\/code: must be equal to one of the allowed values .*slot_unavailable/),
    ]);
    const noDetails = { error: { code: 'not_found', message: 'x' }, meta };
    expect(validate({ method: 'GET', path: '/v1/bookings/bkg_x', status: 404, headers: okHeaders, body: noDetails })).toEqual([
      'GET /v1/bookings/bkg_x 404: body/error: missing property "details"',
    ]);
    const extra = { ...errorBody('not_found'), stack: 'at x' };
    expect(validate({ method: 'GET', path: '/v1/bookings/bkg_x', status: 404, headers: okHeaders, body: extra })).toEqual([
      'GET /v1/bookings/bkg_x 404: body: unexpected property "stack"',
    ]);
    expect(validate({ method: 'GET', path: '/v1/bookings/bkg_x', status: 404, headers: okHeaders, body: { data: makeBooking(), meta } }).length).toBeGreaterThan(0);
  });

  it('reports required headers that are missing and a request id that differs from X-Request-Id', () => {
    expect(validate({ method: 'GET', path: '/v1/bookings', status: 429, headers: okHeaders, body: errorBody('rate_limited') })).toEqual([
      'GET /v1/bookings 429: header Retry-After is missing',
    ]);
    expect(validate({ method: 'GET', path: '/v1/bookings/bkg_x', status: 404, headers: {}, body: errorBody('not_found') })).toEqual([
      'GET /v1/bookings/bkg_x 404: header X-Request-Id is missing',
    ]);
    expect(validate({ method: 'GET', path: '/v1/bookings/bkg_x', status: 404, headers: { 'x-request-id': 'req_other' }, body: errorBody('not_found') })).toEqual([
      'GET /v1/bookings/bkg_x 404: body/meta/request_id "req_test_1" differs from X-Request-Id "req_other"',
    ]);
    expect(
      validate({ method: 'POST', path: '/v1/bookings', status: 201, headers: { ...okHeaders, 'idempotent-replayed': 'yes' }, body: { data: makeBooking(), meta } }),
    ).toEqual([expect.stringContaining('header Idempotent-Replayed: "yes"')]);
  });

  it('reports an unknown path, an undocumented method and a missing body', () => {
    expect(validate({ method: 'GET', path: '/v1/nothing', status: 200, headers: okHeaders, body: {} })).toEqual(['GET /v1/nothing: no documented path matches']);
    expect(validate({ method: 'DELETE', path: '/v1/bookings/bkg_x', status: 200, headers: okHeaders })).toEqual([
      'DELETE /v1/bookings/bkg_x: method not documented for /v1/bookings/{booking}',
    ]);
    expect(validate({ method: 'GET', path: '/v1/bookings/bkg_x', status: 200, headers: okHeaders })).toEqual(['GET /v1/bookings/bkg_x 200: body is missing']);
  });

  it('prefers a literal path segment over a parameter and checks admin answers too', () => {
    const ws = newId('wsp');
    const replay = { method: 'POST', path: `/admin/v1/workspaces/${ws}/webhook-deliveries/replay`, headers: okHeaders };
    expect(validate({ ...replay, status: 202, body: { data: { requeued: 3 }, meta } })).toEqual([]);
    expect(validate({ ...replay, status: 202, body: { data: { replayed: 3 }, meta } })).toHaveLength(2);
    expect(validate({ method: 'POST', path: '/admin/v1/workspaces', status: 400, headers: okHeaders, body: errorBody('invalid_request', [{ field: 'name', issue: 'required' }]) })).toEqual(
      [],
    );
    expect(validate({ method: 'POST', path: '/admin/v1/workspaces', status: 403, headers: okHeaders, body: errorBody('insufficient_scope') })).toEqual([
      expect.stringContaining('status 403 is not documented'),
    ]);
  });
});
