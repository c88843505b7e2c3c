import { checkContract, contractStats } from '../src';

// Deliberate mismatches below must not count in npm test's contract tally.
process.env.CONTRACT_TALLY = 'off';

const meta = { request_id: 'req_abcdefghijklmnopqrstuv' };
const headers = { 'content-type': 'application/json', 'x-request-id': meta.request_id };

describe('checkContract (the contract test every gateway answer in the suites goes through)', () => {
  it('passes a documented error answer and throws on one that breaks the document', () => {
    const before = contractStats().validated;
    const body = { error: { code: 'not_found', message: 'The resource was not found.', details: [] }, meta };
    expect(() => checkContract({ method: 'GET', path: '/v1/bookings/bkg_x', status: 404, headers, body })).not.toThrow();
    expect(() =>
      checkContract({ method: 'GET', path: '/v1/bookings/bkg_x', status: 404, headers, body: { error: { code: 'not_found' }, meta } }),
    ).toThrow(/does not match the OpenAPI document/);
    expect(contractStats().validated).toBe(before + 2);
  });

  it('accepts 401/404/405 for paths the document does not name, and ignores paths outside the contract', () => {
    const body = { error: { code: 'not_found', message: 'x', details: [] }, meta };
    expect(() => checkContract({ method: 'GET', path: '/v1/nothing-here', status: 404, headers, body })).not.toThrow();
    expect(() => checkContract({ method: 'GET', path: '/v1/nothing-here', status: 200, headers, body: {} })).toThrow();
    const skipped = contractStats().skipped;
    checkContract({ method: 'GET', path: '/internal/v1/anything', status: 200, headers, body: {} });
    expect(contractStats().skipped).toBe(skipped + 1);
  });
});
