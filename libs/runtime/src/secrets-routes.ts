import { rotateSealedValuesBodySchema } from '@sched/contracts';
import { parseBody, sendData, type HttpApp } from '@sched/http';
import { rotateSealedValues, sealedValuesOut, sealedValuesStatus, type SealedColumns, type SecretBox, type SqlPool } from '@sched/secrets';

/**
 * Secrets key rotation over a service's own schema (docs/operations.md "Rotating the secrets key"; the
 * gateway forwards /admin/v1/secrets/<service> there, `pnpm admin secrets` calls it): how many values each
 * key id seals, and re-sealing under the current key in bounded batches, safe while serving.
 */
export function registerSecretsRoutes(http: HttpApp, service: string, deps: { pool: SqlPool; box: SecretBox; columns: readonly SealedColumns[] }): void {
  http.route('GET', `/admin/v1/secrets/${service}`, async (_req, res) => {
    sendData(res, 200, sealedValuesOut(service, await sealedValuesStatus(deps.pool, deps.box, deps.columns)));
  });

  http.route('POST', `/admin/v1/secrets/${service}/rotate`, async (req, res) => {
    const body = parseBody(rotateSealedValuesBodySchema.optional(), req);
    const report = await rotateSealedValues(deps.pool, deps.box, deps.columns, { batchSize: body?.batch_size, maxBatches: body?.max_batches });
    sendData(res, 200, sealedValuesOut(service, report));
  });
}
