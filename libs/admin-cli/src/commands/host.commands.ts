import { pathId, stringOption, type CommandContext, type CommandSpec } from '../command';
import { UsageError } from '../errors';

/** A JSON document from --file (path, or `-` for stdin) or --data (inline). */
async function jsonInput(ctx: CommandContext, command: string): Promise<unknown> {
  const file = stringOption(ctx.opts, 'file');
  const data = stringOption(ctx.opts, 'data');
  if ((file === undefined) === (data === undefined)) throw new UsageError('give the schedule with exactly one of --file <path> or --data <json>', command);
  let text: string;
  if (data !== undefined) text = data;
  else if (file === '-') text = await (ctx.io.readStdin ?? (() => Promise.reject(new Error('no stdin'))))();
  else {
    try {
      text = (ctx.io.readFile ?? (() => ''))(file!);
    } catch (err) {
      throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, command);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${data !== undefined ? '--data' : file} is not valid JSON: ${(err as Error).message}`, command);
  }
}

export const hostCommands: CommandSpec[] = [
  {
    name: 'host create',
    summary: 'Create a host who offers Event Types.',
    workspaceScoped: true,
    options: [
      { name: 'name', type: 'string', value: '<name>', description: 'host name', required: true },
      { name: 'email', type: 'string', value: '<email>', description: 'host email address', required: true },
      { name: 'timezone', type: 'string', value: '<iana>', description: 'IANA time zone of the schedule, e.g. Europe/Paris', required: true },
      { name: 'conferencing-url-template', type: 'string', value: '<url>', description: 'video link template with {booking_id}, e.g. https://meet.example.com/{booking_id}' },
    ],
    async run({ api, opts, out, workspace }) {
      const body = { name: opts.name, email: opts.email, timezone: opts.timezone, conferencing_url_template: stringOption(opts, 'conferencing-url-template') };
      const res = await api().request('POST', `/admin/v1/workspaces/${pathId(workspace())}/hosts`, { body });
      out.resource(res.data);
    },
  },
  {
    name: 'schedule set',
    summary: "Replace a host's weekly availability and date overrides.",
    description:
      'The JSON is the body of PUT …/hosts/{host}/schedule, e.g.\n' +
      '  {"weekly":{"mon":[{"start":"09:00","end":"17:00"}]},"overrides":[{"date":"2026-12-24","intervals":[]}]}\n' +
      'Times are HH:MM in the host time zone; end may be 24:00; an override replaces that date (empty = day off).',
    workspaceScoped: true,
    options: [
      { name: 'host', type: 'string', value: '<hst_…>', description: 'host id', required: true },
      { name: 'file', short: 'f', type: 'string', value: '<path|->', description: 'read the schedule JSON from a file (- for stdin)' },
      { name: 'data', short: 'd', type: 'string', value: '<json>', description: 'the schedule JSON inline' },
    ],
    async run(ctx) {
      const body = await jsonInput(ctx, 'schedule set');
      const res = await ctx.api().request('PUT', `/admin/v1/workspaces/${pathId(ctx.workspace())}/hosts/${pathId(String(ctx.opts.host))}/schedule`, { body });
      ctx.out.resource(res.data);
    },
  },
  {
    name: 'calendar connect',
    summary: "Connect a host's CalDAV calendar (busy times are read from it, Booking events written to it).",
    description: 'The password is read from --password-file, else $CALDAV_PASSWORD, else --password (visible in the process list). It is never shown again.',
    workspaceScoped: true,
    options: [
      { name: 'host', type: 'string', value: '<hst_…>', description: 'host id', required: true },
      { name: 'caldav-url', type: 'string', value: '<url>', description: 'CalDAV server or principal URL (discovery)', required: true },
      { name: 'username', type: 'string', value: '<user>', description: 'CalDAV user name', required: true },
      { name: 'password', type: 'string', value: '<secret>', description: 'CalDAV password (prefer --password-file or $CALDAV_PASSWORD)' },
      { name: 'password-file', type: 'string', value: '<path>', description: 'file holding the CalDAV password' },
      { name: 'calendar-url', type: 'string', value: '<url>', description: 'calendar collection to use (default: the first found)' },
    ],
    async run({ api, opts, out, io, workspace }) {
      const file = stringOption(opts, 'password-file');
      let password = stringOption(opts, 'password') ?? io.env.CALDAV_PASSWORD;
      if (file !== undefined) {
        try {
          password = (io.readFile ?? (() => ''))(file).replace(/\r?\n$/, '');
        } catch (err) {
          throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'calendar connect');
        }
      }
      if (!password) throw new UsageError('a CalDAV password is required: --password-file, $CALDAV_PASSWORD or --password', 'calendar connect');
      const body = { provider: 'caldav', url: opts['caldav-url'], username: opts.username, password, calendar_url: stringOption(opts, 'calendar-url') };
      const res = await api().request('PUT', `/admin/v1/workspaces/${pathId(workspace())}/hosts/${pathId(String(opts.host))}/calendar`, { body });
      out.resource(res.data);
    },
  },
  {
    name: 'calendar connect-oauth',
    summary: "Start connecting a host's Google or Microsoft 365 calendar: prints the authorization URL the host opens to consent.",
    description:
      'The URL is good for one consent within 10 minutes (until expires_at). After consent the provider sends the host to the gateway\'s /oauth/callback, which stores the connection and shows whether it worked.',
    workspaceScoped: true,
    options: [
      { name: 'host', type: 'string', value: '<hst_…>', description: 'host id', required: true },
      { name: 'provider', type: 'string', value: '<google|microsoft>', description: 'calendar provider', required: true },
      { name: 'calendar-id', type: 'string', value: '<id>', description: "provider calendar id (default: the account's primary calendar)" },
    ],
    async run({ api, opts, out, workspace }) {
      const provider = String(opts.provider);
      if (provider !== 'google' && provider !== 'microsoft') throw new UsageError('--provider must be google or microsoft', 'calendar connect-oauth');
      const calendarId = stringOption(opts, 'calendar-id');
      const body = { provider, ...(calendarId !== undefined ? { calendar_id: calendarId } : {}) };
      const res = await api().request('POST', `/admin/v1/workspaces/${pathId(workspace())}/hosts/${pathId(String(opts.host))}/calendar/oauth`, { body });
      const data = res.data as { authorization_url?: unknown; expires_at?: unknown };
      if (out.json) return out.data(res.data);
      out.line(String(data.authorization_url));
      out.note(`Open this URL as the host to connect the calendar; it expires at ${String(data.expires_at)} and works once.`);
    },
  },
];
