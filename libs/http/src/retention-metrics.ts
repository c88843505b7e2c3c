import { Counter, type Registry } from 'prom-client';

/**
 * `retention_rows_pruned_total{table}`: rows the retention job (libs/db startRetentionJob) deleted, per
 * table, in the app's registry (so `/metrics` shows it with the service label). Create it once per app.
 */
export function createRetentionMetrics(registry: Registry): { pruned(table: string, rows: number): void } {
  const pruned = new Counter({
    name: 'retention_rows_pruned_total',
    help: 'Rows deleted by the retention job, by table (docs/operations.md, "Retention").',
    labelNames: ['table'],
    registers: [registry],
  });
  return {
    pruned(table, rows) {
      pruned.inc({ table }, rows);
    },
  };
}
