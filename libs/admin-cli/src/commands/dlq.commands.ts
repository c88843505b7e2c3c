import { intOption, pathId, type CommandContext, type CommandSpec } from '../command';
import { presentColumns, renderTable } from '../output';

type Report = { queue?: string; service?: string; available?: boolean; count?: number; oldest?: Array<Record<string, unknown>> } & Record<string, unknown>;

/** The dead-letter answer as a list of per-queue reports, whether it is an array, {queues: [...]} or keyed by queue. */
function reports(data: unknown): Report[] {
  if (Array.isArray(data)) return data as Report[];
  if (data && typeof data === 'object') {
    const queues = (data as { queues?: unknown }).queues;
    if (Array.isArray(queues)) return queues as Report[];
    return Object.entries(data as Record<string, Report>).map(([queue, r]) => ({ queue, ...r }));
  }
  return [];
}

const matches = (r: Report, name: string) => r.queue === name || r.service === name || r.queue === `${name}.dlq` || r.queue?.endsWith(`${name}.dlq`) === true;

async function countOf(ctx: CommandContext, queue: string): Promise<number | undefined> {
  try {
    const found = reports((await ctx.api().request('GET', '/admin/v1/dead-letters')).data).find((r) => matches(r, queue));
    return typeof found?.count === 'number' ? found.count : undefined;
  } catch {
    return undefined; // the count only feeds the progress line; the replay itself reports errors
  }
}

export const dlqCommands: CommandSpec[] = [
  {
    name: 'dlq status',
    summary: 'Dead-letter queues: how many messages each holds, and the oldest ones.',
    options: [{ name: 'limit', type: 'string', value: '<n>', description: 'oldest messages shown per queue, 0 to 100 (default 10)' }],
    async run({ api, opts, out }) {
      const res = await api().request('GET', '/admin/v1/dead-letters', { query: { limit: intOption(opts, 'limit')?.toString() } });
      if (out.json) return out.data(res.data);
      const rows = reports(res.data).map((r) => ({ ...r, oldest_failed_at: r.oldest?.[0]?.first_failed_at ?? null }));
      out.table(rows, ['service', 'queue', 'available', 'count', 'oldest_failed_at'], 'no dead-letter queues');
      for (const r of rows) {
        if (!r.oldest?.length) continue;
        out.line();
        out.line(`oldest in ${r.queue ?? r.service}:`);
        const cols = presentColumns(r.oldest, ['id', 'type', 'routing_key', 'attempts', 'first_failed_at', 'last_error']);
        out.line(renderTable(r.oldest, cols).replace(/^/gm, '  '));
      }
    },
  },
  {
    name: 'dlq replay',
    summary: 'Move the dead letters of a queue back to their queue, with a progress line.',
    description: 'Messages that fail again meanwhile are not replayed in a loop: at most the number present at the start moves.',
    args: [{ name: 'queue', description: 'a service name (booking, availability, invitation, calendar-sync, webhook-dispatch) or its queue as `dlq status` shows it' }],
    options: [{ name: 'max', type: 'string', value: '<n>', description: 'replay at most this many (default: all present now)' }],
    async run(ctx) {
      const queue = ctx.args[0]!;
      const max = intOption(ctx.opts, 'max');
      const available = await countOf(ctx, queue);
      const total = available === undefined || max === undefined ? available : Math.min(available, max);
      const what = total === undefined ? 'dead letters' : `${total} dead letter${total === 1 ? '' : 's'}`;
      const started = Date.now();
      const progress = (final = false) => {
        const text = `replaying ${what} from ${queue} … ${Math.round((Date.now() - started) / 1000)} s`;
        ctx.io.stderr(ctx.io.isTTY ? `\r${text}${final ? '\n' : ''}` : `${text}\n`);
      };
      progress();
      const timer = ctx.io.isTTY ? setInterval(() => progress(), 1000) : undefined;
      try {
        const res = await ctx.api().request('POST', `/admin/v1/dead-letters/${pathId(queue)}/replay`, max === undefined ? {} : { body: { max } });
        if (ctx.io.isTTY) progress(true);
        if (ctx.out.json) return ctx.out.data(res.data);
        const data = (res.data ?? {}) as Record<string, unknown>;
        const moved = data.replayed ?? data.moved;
        ctx.out.line(`moved ${moved ?? '?'}${total === undefined ? '' : ` of ${total}`} dead letters from ${queue} back to their queue`);
      } finally {
        if (timer) clearInterval(timer);
      }
    },
  },
];
