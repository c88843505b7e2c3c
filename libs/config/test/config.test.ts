import { ConfigError, env, parseConfig, serviceEnv, z } from '../src';

describe('parseConfig', () => {
  const schema = z.object({ PORT: env.port(8080), DATABASE_URL: env.url(), DEBUG: env.bool(false) });

  it('applies defaults, coerces types and freezes the result', () => {
    const cfg = parseConfig(schema, { DATABASE_URL: 'postgres://u@h/db' });
    expect(cfg).toEqual({ PORT: 8080, DATABASE_URL: 'postgres://u@h/db', DEBUG: false });
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it('treats an empty variable as unset', () => {
    expect(parseConfig(schema, { DATABASE_URL: 'postgres://u@h/db', PORT: '' }).PORT).toBe(8080);
  });

  it('fails fast naming every bad variable in one readable message', () => {
    let caught: unknown;
    try {
      parseConfig(schema, { PORT: 'eighty', DEBUG: 'maybe' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const msg = (caught as ConfigError).message;
    expect(msg).toMatch(/^Invalid configuration:/);
    expect(msg).toContain('PORT');
    expect(msg).toContain('DATABASE_URL');
    expect(msg).toContain('DEBUG');
    expect((caught as ConfigError).problems).toHaveLength(3);
  });

  it('gives each service its own port and login role by default, and requires the internal credential key ring', () => {
    expect(() => parseConfig(serviceEnv('calendar-sync', 8084), {})).toThrow(/INTERNAL_AUTH_KEYS: required/);
    const cfg = parseConfig(serviceEnv('calendar-sync', 8084), { INTERNAL_AUTH_KEYS: 'k1:key' });
    expect(cfg.PORT).toBe(8084);
    expect(cfg.DATABASE_URL).toBe('postgres://svc_calendar_sync@127.0.0.1:5432/scheduling');
  });

  it('reads CPU_NICE as 0 unless set, and refuses anything but an integer from 0 to 19, naming it', () => {
    const base = { INTERNAL_AUTH_KEYS: 'k1:key' };
    expect(parseConfig(serviceEnv('webhook-dispatch', 8085), base).CPU_NICE).toBe(0);
    expect(parseConfig(serviceEnv('webhook-dispatch', 8085), { ...base, CPU_NICE: '15' }).CPU_NICE).toBe(15);
    expect(parseConfig(serviceEnv('webhook-dispatch', 8085), { ...base, CPU_NICE: '19' }).CPU_NICE).toBe(19);
    for (const bad of ['20', '-1', '1.5', 'low']) {
      let caught: unknown;
      try {
        parseConfig(serviceEnv('webhook-dispatch', 8085), { ...base, CPU_NICE: bad });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).problems).toEqual(['CPU_NICE: must be an integer from 0 (normal priority) to 19 (the lowest) (value was set but rejected)']);
    }
  });

  it('reads PROCESS_ROLE as all unless set, takes api and worker, and refuses anything else, naming it', () => {
    const base = { INTERNAL_AUTH_KEYS: 'k1:key' };
    const service = serviceEnv('booking', 8081);
    expect(parseConfig(service, base).PROCESS_ROLE).toBe('all');
    for (const role of ['all', 'api', 'worker']) expect(parseConfig(service, { ...base, PROCESS_ROLE: role }).PROCESS_ROLE).toBe(role);
    for (const bad of ['both', 'API', 'workers']) {
      expect(() => parseConfig(service, { ...base, PROCESS_ROLE: bad })).toThrow(ConfigError);
      expect(() => parseConfig(service, { ...base, PROCESS_ROLE: bad })).toThrow('PROCESS_ROLE: must be one of all, api, worker (value was set but rejected)');
    }
    // A service without a background part narrows it, and says why.
    const apiOnly = serviceEnv('gateway', 8080).extend({ PROCESS_ROLE: env.processRole(['all', 'api'], 'no background part') });
    expect(parseConfig(apiOnly, { ...base, PROCESS_ROLE: 'api' }).PROCESS_ROLE).toBe('api');
    expect(() => parseConfig(apiOnly, { ...base, PROCESS_ROLE: 'worker' })).toThrow('PROCESS_ROLE: must be one of all, api (no background part) (value was set but rejected)');
  });

  it('rejects a short secret', () => {
    expect(() => parseConfig(z.object({ K: env.secret() }), { K: 'short' })).toThrow(/K: must be at least 32 characters/);
  });
});
