import { intOption, pathId, stringOption, type CommandSpec, type OptionSpec, type OptionValues } from '../command';
import { UsageError } from '../errors';

/** Flag → body field of the admin Event Type (decisions.md §7; bounds in libs/contracts). */
const FIELDS: Array<OptionSpec & { field: string; int?: boolean }> = [
  { name: 'name', field: 'name', type: 'string', value: '<name>', description: 'name, 1 to 120 characters' },
  { name: 'slug', field: 'slug', type: 'string', value: '<slug>', description: '1 to 60 of [a-z0-9-], unique in the workspace' },
  { name: 'description', field: 'description', type: 'string', value: '<text>', description: 'up to 2000 characters' },
  { name: 'duration', field: 'duration_minutes', int: true, type: 'string', value: '<minutes>', description: 'meeting length, 1 to 1440' },
  { name: 'interval', field: 'slot_interval_minutes', int: true, type: 'string', value: '<minutes>', description: 'slot grid step (default: the duration)' },
  { name: 'buffer-before', field: 'buffer_before_minutes', int: true, type: 'string', value: '<minutes>', description: 'free time kept before (default 0)' },
  { name: 'buffer-after', field: 'buffer_after_minutes', int: true, type: 'string', value: '<minutes>', description: 'free time kept after (default 0)' },
  { name: 'minimum-notice', field: 'minimum_notice_minutes', int: true, type: 'string', value: '<minutes>', description: 'earliest start from now (default 0)' },
  { name: 'maximum-advance', field: 'maximum_advance_minutes', int: true, type: 'string', value: '<minutes>', description: 'latest start from now (default 86400 = 60 days)' },
  { name: 'meeting-type', field: 'meeting_type', type: 'string', value: '<type>', description: 'video, phone, in_person or custom' },
  { name: 'status', field: 'status', type: 'string', value: '<status>', description: 'active or inactive (default active)' },
  { name: 'access', field: 'access', type: 'string', value: '<mode>', description: 'public or invitation_only (default public)' },
];

function bodyFrom(opts: OptionValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of FIELDS) {
    const value = f.int ? intOption(opts, f.name) : stringOption(opts, f.name);
    if (value !== undefined) body[f.field] = value;
  }
  if (opts['clear-description']) body.description = null;
  return body;
}

const options = FIELDS.map(({ field: _f, int: _i, ...o }) => o);
const requiredOnCreate = new Set(['name', 'slug', 'duration', 'meeting-type']);

export const eventTypeCommands: CommandSpec[] = [
  {
    name: 'event-type create',
    summary: 'Create an Event Type for a host.',
    workspaceScoped: true,
    options: [
      { name: 'host', type: 'string', value: '<hst_…>', description: 'host offering it (set at creation only)', required: true },
      ...options.map((o) => (requiredOnCreate.has(o.name) ? { ...o, required: true } : o)),
    ],
    async run({ api, opts, out, workspace }) {
      const res = await api().request('POST', `/admin/v1/workspaces/${pathId(workspace())}/event-types`, { body: { host_id: opts.host, ...bodyFrom(opts) } });
      out.resource(res.data);
    },
  },
  {
    name: 'event-type update',
    summary: 'Change fields of an Event Type (only the flags given).',
    workspaceScoped: true,
    args: [{ name: 'event_type_id', description: 'the Event Type (evt_…)' }],
    options: [...options, { name: 'clear-description', type: 'boolean', description: 'set description to null' }],
    async run({ api, opts, args, out, workspace }) {
      const body = bodyFrom(opts);
      if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give at least one field flag', 'event-type update');
      const res = await api().request('PATCH', `/admin/v1/workspaces/${pathId(workspace())}/event-types/${pathId(args[0]!)}`, { body });
      out.resource(res.data);
    },
  },
];
