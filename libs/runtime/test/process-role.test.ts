import { processParts, type ProcessRole } from '../src';

describe('processParts (PROCESS_ROLE)', () => {
  it('runs both parts for all (also when unset), only the API for api, only the background work for worker', () => {
    expect(processParts('all')).toEqual({ role: 'all', api: true, background: true });
    expect(processParts(undefined)).toEqual({ role: 'all', api: true, background: true });
    expect(processParts('api')).toEqual({ role: 'api', api: true, background: false });
    expect(processParts('worker')).toEqual({ role: 'worker', api: false, background: true });
    expect(Object.isFrozen(processParts('api'))).toBe(true);
  });

  it('refuses anything else, naming the setting (a config made by hand, past the schema)', () => {
    expect(() => processParts('both' as ProcessRole)).toThrow("PROCESS_ROLE must be one of all, api, worker, got 'both'");
  });
});
