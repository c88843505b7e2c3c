import { ProviderError, type CalendarAccess, type CalendarProvider, type ProviderName } from '../domain/calendar-provider';

/**
 * One CalendarProvider over the adapters of every provider name: the domain calls the port, the
 * registry hands each call to the adapter the connection was made with. Adding Google Calendar or
 * Microsoft 365 = an adapter in providers/<name>/ plus one entry here (and the name in the admin
 * request schema); nothing in domain/ changes.
 */
export function createProviderRegistry(adapters: Partial<Record<ProviderName, CalendarProvider>>): CalendarProvider {
  const pick = (name: ProviderName): CalendarProvider => {
    const adapter = adapters[name];
    // Only reachable with a stored connection of a provider this build has no adapter for (or no longer has).
    if (!adapter) throw new ProviderError('rejected', `no calendar provider adapter named ${String(name)}`);
    return adapter;
  };
  return {
    verify: (input) => pick(input.provider).verify(input),
    changeMarker: (access: CalendarAccess) => pick(access.provider).changeMarker(access),
    listEvents: (access, window) => pick(access.provider).listEvents(access, window),
    putEvent: (access, event) => pick(access.provider).putEvent(access, event),
    deleteEvent: (access, objectUrl) => pick(access.provider).deleteEvent(access, objectUrl),
  };
}
