import { rotateSealedValuesBodySchema } from '@sched/contracts';
import { parseBody, sendData, type HttpApp } from '@sched/http';
import { rotateSealedValues, sealedValuesOut, sealedValuesStatus, type SecretBox, type SqlPool } from '@sched/secrets';
import { SEALED_COLUMNS } from '../store/sealed-columns';

/**
 * Secrets key rotation over this service's own schema (docs/operations.md "Rotating the secrets key";
 * the gateway forwards /admin/v1/secrets/calendar-sync here, `pnpm admin secrets` calls it): how many values
 * each key id seals, and re-sealing under the current key in bounded batches, safe while serving.
 */
export function registerSecretsRoutes(http: HttpApp, deps: { pool: SqlPool; box: SecretBox }): void {
  http.route('GET', '/admin/v1/secrets/calendar-sync', async (_req, res) => {
    sendData(res, 200, sealedValuesOut('calendar-sync', await sealedValuesStatus(deps.pool, deps.box, SEALED_COLUMNS)));
  });

  http.route('POST', '/admin/v1/secrets/calendar-sync/rotate', async (req, res) => {
    const body = parseBody(rotateSealedValuesBodySchema.optional(), req);
    const report = await rotateSealedValues(deps.pool, deps.box, SEALED_COLUMNS, { batchSize: body?.batch_size, maxBatches: body?.max_batches });
    sendData(res, 200, sealedValuesOut('calendar-sync', report));
  });
}
