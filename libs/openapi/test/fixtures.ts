export { makeBooking } from '../../contracts/test/fixtures';

export const REQUEST_ID = 'req_test_1';
export const okHeaders = { 'x-request-id': REQUEST_ID, 'ratelimit-limit': '100', 'ratelimit-remaining': '99', 'ratelimit-reset': '10' };
