import type { SealedColumns } from '@sched/secrets';

/**
 * Every value this service stores sealed (@sched/secrets), with the associated data it was sealed with,
 * for `pnpm admin secrets rotate` (http/secrets.routes.ts). A new sealed column must be added here.
 * Both signing secrets of an endpoint are bound to its id (domain/webhook-endpoints.ts).
 */
export const SEALED_COLUMNS: readonly SealedColumns[] = [
  {
    table: 'webhook_dispatch.endpoints',
    key: 'id',
    columns: ['secret_sealed', 'previous_secret_sealed'],
    aadColumns: ['id'],
    associatedData: (row) => String(row.id),
  },
];
