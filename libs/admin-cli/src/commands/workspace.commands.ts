import { SCOPES } from '@sched/contracts';
import { listOption, pathId, stringOption, type CommandSpec } from '../command';
import { UsageError } from '../errors';

const API_KEY_COLUMNS = ['id', 'name', 'key_hint', 'scopes', 'rate_limit', 'expires_at', 'revoked_at', 'created_at'];

/** `--rate-limit 1000/10` → {limit: 1000, window_seconds: 10}. */
function rateLimit(value: string | undefined): { limit: number; window_seconds: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)\/(\d+)$/.exec(value);
  if (!m) throw new UsageError(`--rate-limit must be <requests>/<seconds>, e.g. 1000/10; got ${JSON.stringify(value)}`, 'api-key create');
  return { limit: Number(m[1]), window_seconds: Number(m[2]) };
}

export const workspaceCommands: CommandSpec[] = [
  {
    name: 'workspace create',
    summary: 'Create a workspace (POST /admin/v1/workspaces).',
    options: [
      { name: 'name', type: 'string', value: '<name>', description: 'workspace name, 1 to 120 characters', required: true },
      { name: 'mode', type: 'string', value: '<live|test>', description: 'test workspaces get sk_test_ keys (default: live)' },
    ],
    async run({ api, opts, out }) {
      const res = await api().request('POST', '/admin/v1/workspaces', { body: { name: opts.name, mode: stringOption(opts, 'mode') } });
      out.resource(res.data);
    },
  },
  {
    name: 'api-key create',
    summary: 'Create an API key; the key is shown once.',
    description: `Scopes: ${SCOPES.join(', ')}.\nAsk only for the scopes the integration uses.`,
    workspaceScoped: true,
    options: [
      { name: 'name', type: 'string', value: '<name>', description: 'what the key is for', required: true },
      { name: 'scopes', type: 'string', value: '<a,b,…>', description: 'comma-separated scopes', required: true },
      { name: 'expires-at', type: 'string', value: '<timestamp>', description: 'RFC 3339 UTC expiry (default: never)' },
      { name: 'rate-limit', type: 'string', value: '<n/seconds>', description: 'own rate limit, e.g. 1000/10 (default: the gateway default)' },
    ],
    async run({ api, opts, out, workspace }) {
      const body = { name: opts.name, scopes: listOption(opts, 'scopes'), expires_at: stringOption(opts, 'expires-at'), rate_limit: rateLimit(stringOption(opts, 'rate-limit')) };
      const res = await api().request('POST', `/admin/v1/workspaces/${pathId(workspace())}/api-keys`, { body });
      const { key, ...rest } = res.data as Record<string, unknown>;
      if (out.json) return out.data(res.data);
      out.resource(rest);
      out.secret('key', key);
    },
  },
  {
    name: 'api-key list',
    summary: 'List the API keys of a workspace (never their secrets).',
    workspaceScoped: true,
    options: [],
    async run({ api, out, workspace }) {
      const res = await api().request('GET', `/admin/v1/workspaces/${pathId(workspace())}/api-keys`);
      out.table(res.data, API_KEY_COLUMNS, 'no API keys');
    },
  },
  {
    name: 'api-key revoke',
    summary: 'Revoke an API key; it stops working within seconds on every gateway.',
    workspaceScoped: true,
    args: [{ name: 'key_id', description: 'the key id (key_…), not the secret' }],
    options: [],
    async run({ api, args, out, workspace }) {
      const res = await api().request('POST', `/admin/v1/workspaces/${pathId(workspace())}/api-keys/${pathId(args[0]!)}/revoke`);
      out.resource(res.data);
    },
  },
];
