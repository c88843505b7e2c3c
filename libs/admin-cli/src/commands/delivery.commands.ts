import { intOption, pathId, stringOption, type CommandSpec } from '../command';

// `attempts` is the list of attempts (shown with --json); the table shows their count.
const DELIVERY_COLUMNS = ['id', 'endpoint_id', 'event_id', 'event_type', 'status', 'attempt_count', 'last_error', 'next_attempt_at', 'created_at'];

export const deliveryCommands: CommandSpec[] = [
  {
    name: 'deliveries list',
    summary: 'List webhook deliveries, newest first, e.g. the failed ones of one endpoint.',
    workspaceScoped: true,
    options: [
      { name: 'status', type: 'string', value: '<status>', description: 'pending, succeeded or failed' },
      { name: 'endpoint', type: 'string', value: '<whe_…>', description: 'only deliveries to this endpoint' },
      { name: 'limit', type: 'string', value: '<n>', description: 'page size, 1 to 100 (default 20)' },
      { name: 'cursor', type: 'string', value: '<cursor>', description: 'the next_cursor of the previous page' },
    ],
    async run({ api, opts, out, workspace }) {
      const limit = intOption(opts, 'limit');
      const query = { status: stringOption(opts, 'status'), endpoint_id: stringOption(opts, 'endpoint'), limit: limit?.toString(), cursor: stringOption(opts, 'cursor') };
      const res = await api().request('GET', `/admin/v1/workspaces/${pathId(workspace())}/webhook-deliveries`, { query });
      if (out.json) return out.data(res.data);
      out.table(res.data, DELIVERY_COLUMNS, 'no deliveries');
      if (res.meta.next_cursor) out.note(`more: add --cursor ${res.meta.next_cursor}`);
    },
  },
  {
    name: 'deliveries replay',
    summary: 'Re-queue the failed deliveries of one endpoint created in [from, to) (same webhook-id each).',
    workspaceScoped: true,
    options: [
      { name: 'endpoint', type: 'string', value: '<whe_…>', description: 'the endpoint whose deliveries to re-send', required: true },
      { name: 'from', type: 'string', value: '<timestamp>', description: 'RFC 3339 UTC, inclusive', required: true },
      { name: 'to', type: 'string', value: '<timestamp>', description: 'RFC 3339 UTC, exclusive', required: true },
    ],
    async run({ api, opts, out, workspace }) {
      const body = { endpoint_id: opts.endpoint, from: opts.from, to: opts.to };
      const res = await api().request('POST', `/admin/v1/workspaces/${pathId(workspace())}/webhook-deliveries/replay`, { body });
      out.resource(res.data);
    },
  },
  {
    name: 'delivery replay',
    summary: 'Re-send one delivery with the same webhook-id (receivers deduplicate on it).',
    args: [{ name: 'delivery_id', description: 'the delivery (whd_…)' }],
    options: [],
    async run({ api, args, out }) {
      const res = await api().request('POST', `/admin/v1/webhook-deliveries/${pathId(args[0]!)}/replay`);
      out.resource(res.data);
    },
  },
];
