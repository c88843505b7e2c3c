import { randomBytes } from 'node:crypto';
import { secretBoxFromEnv } from '@sched/secrets';
import { ProviderError } from '../../src/domain/calendar-provider';
import { accessFor, passwordAad } from '../../src/domain/connection-status';
import type { Connection } from '../../src/domain/ports';
import { SEALED_COLUMNS } from '../../src/store/sealed-columns';

const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const now = new Date('2026-12-01T08:00:00Z');
const connection = (passwordSealed: string): Connection => ({
  id: 'cal_1',
  workspaceId: 'wsp_1',
  hostId: 'hst_1',
  provider: 'caldav',
  url: 'http://cal.example',
  username: 'u',
  passwordSealed,
  calendarUrl: 'http://cal.example/u/c/',
  hostTimezone: 'UTC',
  conferencingUrlTemplate: null,
  status: 'connected',
  errorCode: null,
  createdAt: now,
  updatedAt: now,
});

describe('the sealed calendar password and the key ring', () => {
  const sealed = secretBoxFromEnv({ SECRETS_KEYS: `k1:${K1}` }).seal('hunter2', passwordAad('wsp_1', 'hst_1'));

  it('opens under any key of the ring', () => {
    expect(accessFor(connection(sealed), secretBoxFromEnv({ SECRETS_KEYS: `k2:${K2},k1:${K1}` })).password).toBe('hunter2');
  });

  it('a password whose key left the ring is refused credentials, and the message names the key id (never the password)', () => {
    let thrown: unknown;
    try {
      accessFor(connection(sealed), secretBoxFromEnv({ SECRETS_KEYS: `k2:${K2}` }));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ProviderError);
    expect((thrown as ProviderError).kind).toBe('auth_failed');
    expect((thrown as Error).message).toContain('sealed value uses key id "k1", which is not in SECRETS_KEYS');
    expect((thrown as Error).message).not.toContain('hunter2');
  });

  it('the rotation re-seals with exactly the associated data the password was sealed with', () => {
    const [spec] = SEALED_COLUMNS;
    const row = { id: 'cal_1', workspace_id: 'wsp_1', host_id: 'hst_1', password_sealed: sealed };
    const box = secretBoxFromEnv({ SECRETS_KEYS: `k2:${K2},k1:${K1}` });
    const aad = spec!.associatedData(row, 'password_sealed');
    expect(aad).toBe(passwordAad('wsp_1', 'hst_1'));
    const resealed = box.seal(box.open(sealed, aad), aad);
    expect(accessFor(connection(resealed), secretBoxFromEnv({ SECRETS_KEYS: `k2:${K2}` })).password).toBe('hunter2');
  });
});
