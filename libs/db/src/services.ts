/** The six services that own a Postgres schema, with the schema and login role each one owns. */
export const SERVICES = {
  gateway: { schema: 'gateway', role: 'svc_gateway' },
  booking: { schema: 'booking', role: 'svc_booking' },
  availability: { schema: 'availability', role: 'svc_availability' },
  invitation: { schema: 'invitation', role: 'svc_invitation' },
  'calendar-sync': { schema: 'calendar_sync', role: 'svc_calendar_sync' },
  'webhook-dispatch': { schema: 'webhook_dispatch', role: 'svc_webhook_dispatch' },
} as const satisfies Record<string, { schema: string; role: string }>;

export type ServiceName = keyof typeof SERVICES;

/** Where one service's data lives. Tests may pass their own names to work with throwaway roles. */
export interface ServiceDbNames {
  service: string;
  schema: string;
  role: string;
}

/** Migration order: the order of SERVICES (gateway first), which `pnpm migrate` follows. */
export const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

export function isServiceName(name: string): name is ServiceName {
  return Object.prototype.hasOwnProperty.call(SERVICES, name);
}

export function serviceDbNames(service: ServiceName): ServiceDbNames {
  const names = SERVICES[service];
  if (!names) throw new Error(`Unknown service "${String(service)}"; expected one of ${SERVICE_NAMES.join(', ')}`);
  return { service, schema: names.schema, role: names.role };
}

/**
 * Role and schema names go into DDL that cannot take bind parameters, so only plain
 * lower-case identifiers are accepted; they are quoted as well.
 */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export function quoteIdent(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`Refusing unsafe SQL identifier "${name}"`);
  return `"${name}"`;
}
