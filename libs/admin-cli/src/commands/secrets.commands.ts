import { SEALING_SERVICES, type AdminSealedValues } from '@sched/contracts';
import { intOption, stringOption, type CommandContext, type CommandSpec, type OptionSpec } from '../command';
import { CommandFailedError, UsageError } from '../errors';

/**
 * Secrets key rotation (docs/operations.md "Rotating the secrets key"). Each service that seals values
 * re-seals its own (POST /admin/v1/secrets/{service}/rotate, one bounded call at a time); this command
 * calls it until every value is under the current key, printing the progress after each call.
 */

type Column = AdminSealedValues['columns'][number];

const SERVICE_OPTION: OptionSpec = {
  name: 'service',
  type: 'string',
  value: '<name>',
  description: `only this service (${SEALING_SERVICES.join(', ')}); default: all of them`,
};

/** Consecutive complete passes that leave values under an old key before giving up (about 1 s apart). */
const MAX_UNFINISHED_PASSES = 30;

function servicesOf(ctx: CommandContext, command: string): readonly string[] {
  const one = stringOption(ctx.opts, 'service');
  if (one === undefined) return SEALING_SERVICES;
  if (!(SEALING_SERVICES as readonly string[]).includes(one)) throw new UsageError(`--service must be one of ${SEALING_SERVICES.join(', ')}, got ${JSON.stringify(one)}`, command);
  return [one];
}

const where = (c: Pick<Column, 'table' | 'column'>) => `${c.table}.${c.column}`;
const byKeyId = (c: Column) =>
  Object.entries(c.by_key_id)
    .map(([id, n]) => `${id}=${n}`)
    .join(' ');
const remaining = (r: AdminSealedValues) => r.columns.reduce((n, c) => n + c.total - c.current, 0);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const secretsCommands: CommandSpec[] = [
  {
    name: 'secrets status',
    summary: 'How many stored sealed values each key id seals, per service and column.',
    description: 'A key may leave SECRETS_KEYS once no column counts a value under it (after `secrets rotate`).',
    options: [SERVICE_OPTION],
    async run(ctx) {
      const reports: AdminSealedValues[] = [];
      for (const service of servicesOf(ctx, 'secrets status')) {
        reports.push((await ctx.api().request('GET', `/admin/v1/secrets/${service}`)).data as AdminSealedValues);
      }
      if (ctx.out.json) return ctx.out.data(reports);
      const rows = reports.flatMap((r) => r.columns.map((c) => ({ service: r.service, current_key: r.key_id, column: where(c), total: c.total, under_current: c.current, by_key_id: byKeyId(c) })));
      ctx.out.table(rows, ['service', 'current_key', 'column', 'total', 'under_current', 'by_key_id']);
      const old = reports.filter((r) => remaining(r) > 0).map((r) => r.service);
      ctx.out.line();
      ctx.out.line(old.length === 0 ? 'every sealed value is under its service’s current key' : `values under older keys remain in ${old.join(', ')}: run \`pnpm admin secrets rotate\``);
    },
  },
  {
    name: 'secrets rotate',
    summary: 'Re-seal every stored secret under the newest key of SECRETS_KEYS, with a progress line.',
    description: [
      'Run it after every replica runs with the new key first in SECRETS_KEYS (docs/operations.md, "Rotating the secrets key").',
      'Safe while the services run (short batches under row locks; rows being written are done on a later pass) and resumable:',
      'it only touches values not yet under the newest key, so after an interruption just run it again.',
      'Exit 1 when values remain that cannot be opened (their key id is no longer in the ring: each is named).',
    ].join('\n'),
    options: [SERVICE_OPTION, { name: 'batch-size', type: 'string', value: '<n>', description: 'rows per batch, 1 to 1000 (default 100)' }],
    async run(ctx) {
      const batchSize = intOption(ctx.opts, 'batch-size');
      if (batchSize !== undefined && (batchSize < 1 || batchSize > 1000)) throw new UsageError('--batch-size must be 1 to 1000', 'secrets rotate');
      const finals: AdminSealedValues[] = [];
      const problems: string[] = [];
      const progress = (r: AdminSealedValues, final: boolean) => {
        const text = `rotating ${r.service} to ${r.key_id}: ${r.columns.map((c) => `${where(c)} ${c.current}/${c.total}`).join(', ')}`;
        ctx.io.stderr(ctx.io.isTTY ? `\r\u001b[2K${text}${final ? '\n' : ''}` : `${text}\n`);
      };

      for (const service of servicesOf(ctx, 'secrets rotate')) {
        const rotated = new Map<string, number>();
        let unfinishedPasses = 0;
        let report: AdminSealedValues;
        for (;;) {
          report = (await ctx.api().request('POST', `/admin/v1/secrets/${service}/rotate`, { body: batchSize === undefined ? {} : { batch_size: batchSize } })).data as AdminSealedValues;
          for (const c of report.columns) rotated.set(where(c), (rotated.get(where(c)) ?? 0) + c.rotated);
          const left = remaining(report);
          progress(report, left === 0);
          if (left === 0) break;
          if (!report.finished) continue; // stopped at its time budget: carry on
          // A whole pass done and values left: ones that cannot be opened, or rows a writer held just then.
          const failed = report.columns.reduce((n, c) => n + c.failed, 0);
          if (left <= failed || ++unfinishedPasses >= MAX_UNFINISHED_PASSES) {
            if (ctx.io.isTTY) ctx.io.stderr('\n');
            for (const e of report.errors) problems.push(`${service}: ${e.table}.${e.column} row ${e.row_id}: ${e.message}`);
            if (left > failed) {
              const old = [...new Set(report.columns.flatMap((c) => Object.keys(c.by_key_id).filter((id) => id !== report.key_id)))];
              problems.push(`${service}: ${left - failed} value(s) still under ${old.join(', ')} after ${MAX_UNFINISHED_PASSES} passes: rows kept locked, or a replica still sealing with an older key first in its ring`);
            }
            break;
          }
          await sleep(1000);
        }
        finals.push({ ...report, columns: report.columns.map((c) => ({ ...c, rotated: rotated.get(where(c)) ?? 0 })) });
      }

      if (ctx.out.json) ctx.out.data(finals);
      else {
        const rows = finals.flatMap((r) => r.columns.map((c) => ({ service: r.service, column: where(c), rotated: c.rotated, under_current: `${c.current}/${c.total}`, by_key_id: byKeyId(c) })));
        ctx.out.table(rows, ['service', 'column', 'rotated', 'under_current', 'by_key_id']);
      }
      if (problems.length > 0) throw new CommandFailedError(`some values were not rotated:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
      const keys = [...new Set(finals.map((r) => r.key_id))];
      ctx.out.note(`every sealed value is under ${keys.join(', ')}: older keys can now be removed from SECRETS_KEYS (then restart the services)`);
    },
  },
];
