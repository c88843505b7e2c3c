import { z } from 'zod';

/**
 * Secrets key rotation (docs/operations.md "Rotating the secrets key"): each service that seals values
 * at rest answers `GET /admin/v1/secrets/{service}` (how many values each key id seals) and
 * `POST /admin/v1/secrets/{service}/rotate` (re-seal, in bounded batches, what is not yet under the
 * current key), over its own schema. `pnpm admin secrets rotate` calls the latter until done.
 */
export const SEALING_SERVICES = ['calendar-sync', 'invitation', 'webhook-dispatch'] as const;
export type SealingService = (typeof SEALING_SERVICES)[number];

/** Optional body of POST /admin/v1/secrets/{service}/rotate. */
export const rotateSealedValuesBodySchema = z
  .strictObject({
    batch_size: z.number().int().min(1).max(1000).optional().meta({ description: 'Rows per batch, each batch one short transaction; default 100.' }),
    max_batches: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .meta({ description: 'Stop after this many batches (the next call continues where this one stopped); default: until done or about 2 s have passed.' }),
  })
  .meta({ id: 'AdminRotateSealedValuesRequest', description: 'Optional body of POST /admin/v1/secrets/{service}/rotate.' });

const count = z.number().int().min(0);

export const sealedColumnSchema = z
  .strictObject({
    table: z.string().meta({ description: 'Schema-qualified table, e.g. calendar_sync.calendar_connections.' }),
    column: z.string(),
    total: count.meta({ description: 'Sealed values stored in the column.' }),
    current: count.meta({ description: 'Of them, sealed under the current key (key_id).' }),
    by_key_id: z.record(z.string(), count).meta({ description: 'Values per key id.' }),
    rotated: count.meta({ description: 'Re-sealed by this call (0 in a status).' }),
    failed: count.meta({ description: 'Values this call could not open (left unchanged; see errors).' }),
  })
  .meta({ id: 'AdminSealedColumn', description: 'The sealed values of one column, counted by key id.' });

export const sealedValuesReportSchema = z
  .strictObject({
    service: z.enum(SEALING_SERVICES),
    key_id: z.string().meta({ description: 'The key id new values are sealed under (the first of SECRETS_KEYS).' }),
    key_ids: z.array(z.string()).meta({ description: 'Every key id the service can open, the current one first.' }),
    finished: z.boolean().meta({ description: 'False when the call stopped at its time or batch limit before the end of every table: call again.' }),
    columns: z.array(sealedColumnSchema),
    errors: z
      .array(z.strictObject({ table: z.string(), column: z.string(), row_id: z.string(), message: z.string() }))
      .meta({ description: 'The first values that could not be opened, e.g. `sealed value uses key id "k0", which is not in SECRETS_KEYS …`.' }),
  })
  .meta({ id: 'AdminSealedValues', description: "A service's sealed values by key id; after a rotate call, also what it re-sealed." });

export type RotateSealedValuesBody = z.infer<typeof rotateSealedValuesBodySchema>;
export type AdminSealedValues = z.infer<typeof sealedValuesReportSchema>;
