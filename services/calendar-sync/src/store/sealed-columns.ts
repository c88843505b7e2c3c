import type { SealedColumns } from '@sched/secrets';
import { passwordAad } from '../domain/connection-status';

/**
 * Every value this service stores sealed (@sched/secrets), with the associated data it was sealed with,
 * for `pnpm admin secrets rotate` (http/secrets.routes.ts). A new sealed column must be added here.
 * The password column holds any provider credential (a CalDAV password, an OAuth refresh token).
 */
export const SEALED_COLUMNS: readonly SealedColumns[] = [
  {
    table: 'calendar_sync.calendar_connections',
    key: 'id',
    columns: ['password_sealed'],
    aadColumns: ['workspace_id', 'host_id'],
    associatedData: (row) => passwordAad(String(row.workspace_id), String(row.host_id)),
  },
];
