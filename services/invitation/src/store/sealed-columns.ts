import type { SealedColumns } from '@sched/secrets';

/**
 * Every value this service stores sealed (@sched/secrets), with the associated data it was sealed with,
 * for `pnpm admin secrets rotate` (http/secrets.routes.ts). A new sealed column must be added here.
 * The stored answers of create and reissue carry the invitation_url: runIdempotent seals them with the
 * key row's id as associated data (libs/idempotency README, "Sealed answers"); the others are plain.
 */
export const SEALED_COLUMNS: readonly SealedColumns[] = [
  {
    table: 'invitation.idempotency_keys',
    key: 'id',
    columns: ['response_body'],
    aadColumns: ['id'],
    associatedData: (row) => String(row.id),
    where: 'sealed',
  },
];
