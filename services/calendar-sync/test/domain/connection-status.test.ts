import { calendarErrorCode, isConnectionBroken } from '../../src/domain/connection-status';
import type { ProviderErrorKind } from '../../src/domain/calendar-provider';

describe('provider failures as error codes and connection status', () => {
  it('maps a revoked OAuth grant to auth_failed (decisions.md §6 has no other code) and marks the connection broken', () => {
    expect(calendarErrorCode('reauthorization_required')).toBe('auth_failed');
    expect(isConnectionBroken('reauthorization_required')).toBe(true);
  });

  it('keeps the mapping of the other kinds', () => {
    const kinds: ProviderErrorKind[] = ['unavailable', 'auth_failed', 'calendar_not_found', 'not_calendar_server', 'rejected'];
    expect(kinds.map(calendarErrorCode)).toEqual(['provider_unavailable', 'auth_failed', 'calendar_not_found', 'calendar_not_found', 'rejected']);
    expect(kinds.filter(isConnectionBroken)).toEqual(['auth_failed', 'calendar_not_found', 'not_calendar_server']);
  });
});
