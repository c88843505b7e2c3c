import { PUBLIC_EVENT_KINDS } from '@sched/contracts';
import { listOption, pathId, stringOption, type CommandSpec } from '../command';
import { UsageError } from '../errors';

const ENDPOINT_COLUMNS = ['id', 'url', 'events', 'enabled', 'disabled_reason', 'created_at'];
const KINDS = PUBLIC_EVENT_KINDS.join(', ');
const base = (ws: string) => `/admin/v1/workspaces/${pathId(ws)}/webhook-endpoints`;

export const webhookEndpointCommands: CommandSpec[] = [
  {
    name: 'webhook-endpoint create',
    summary: 'Register a webhook receiver; its signing secret is shown once.',
    description: `Event kinds: ${KINDS}.`,
    workspaceScoped: true,
    options: [
      { name: 'endpoint-url', type: 'string', value: '<url>', description: 'receiver URL; in production mode it must be a public address', required: true },
      { name: 'events', type: 'string', value: '<a,b,…>', description: 'comma-separated event kinds', required: true },
    ],
    async run({ api, opts, out, workspace }) {
      const res = await api().request('POST', base(workspace()), { body: { url: opts['endpoint-url'], events: listOption(opts, 'events') } });
      const { secret, ...rest } = res.data as Record<string, unknown>;
      if (out.json) return out.data(res.data);
      out.resource(rest);
      out.secret('secret', secret);
    },
  },
  {
    name: 'webhook-endpoint list',
    summary: 'List the webhook endpoints of a workspace (never their secrets).',
    workspaceScoped: true,
    options: [],
    async run({ api, out, workspace }) {
      const res = await api().request('GET', base(workspace()));
      out.table(res.data, ENDPOINT_COLUMNS, 'no webhook endpoints');
    },
  },
  {
    name: 'webhook-endpoint update',
    summary: 'Change the URL or the event kinds of an endpoint, or disable / enable it.',
    description: `Event kinds: ${KINDS}.`,
    workspaceScoped: true,
    args: [{ name: 'endpoint_id', description: 'the endpoint (whe_…)' }],
    options: [
      { name: 'endpoint-url', type: 'string', value: '<url>', description: 'new receiver URL' },
      { name: 'events', type: 'string', value: '<a,b,…>', description: 'new comma-separated event kinds' },
      { name: 'disable', type: 'boolean', description: 'stop deliveries (pending ones fail, without dead-lettering)' },
      { name: 'enable', type: 'boolean', description: 'resume deliveries of new events (replay the failed ones by range)' },
    ],
    async run({ api, opts, args, out, workspace }) {
      const body: Record<string, unknown> = {};
      if (stringOption(opts, 'endpoint-url') !== undefined) body.url = opts['endpoint-url'];
      if (stringOption(opts, 'events') !== undefined) body.events = listOption(opts, 'events');
      if (opts.enable && opts.disable) throw new UsageError('--enable and --disable exclude each other', 'webhook-endpoint update');
      if (opts.enable || opts.disable) body.enabled = opts.enable === true;
      if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --endpoint-url, --events, --enable or --disable', 'webhook-endpoint update');
      const res = await api().request('PATCH', `${base(workspace())}/${pathId(args[0]!)}`, { body });
      out.resource(res.data);
    },
  },
  {
    name: 'webhook-endpoint delete',
    summary: 'Delete an endpoint; nothing more is delivered to it.',
    workspaceScoped: true,
    args: [{ name: 'endpoint_id', description: 'the endpoint (whe_…)' }],
    options: [],
    async run({ api, args, out, workspace }) {
      const res = await api().request('DELETE', `${base(workspace())}/${pathId(args[0]!)}`);
      if (out.json) return out.data(res.data);
      out.line(`deleted ${args[0]!}`);
    },
  },
  {
    name: 'webhook-endpoint rotate-secret',
    summary: 'Give an endpoint a new signing secret (shown once).',
    workspaceScoped: true,
    args: [{ name: 'endpoint_id', description: 'the endpoint (whe_…)' }],
    options: [],
    async run({ api, args, out, workspace }) {
      const res = await api().request('POST', `${base(workspace())}/${pathId(args[0]!)}/rotate-secret`);
      const { secret, ...rest } = (res.data ?? {}) as Record<string, unknown>;
      if (out.json) return out.data(res.data);
      out.resource(rest);
      out.secret('new secret', secret);
    },
  },
];
