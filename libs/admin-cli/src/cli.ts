import { AdminApi } from './admin-api';
import { commandHelp, GLOBAL_OPTIONS, parseCommandLine, stringOption, type CommandSpec } from './command';
import { deliveryCommands } from './commands/delivery.commands';
import { dlqCommands } from './commands/dlq.commands';
import { eventTypeCommands } from './commands/event-type.commands';
import { hostCommands } from './commands/host.commands';
import { secretsCommands } from './commands/secrets.commands';
import { webhookEndpointCommands } from './commands/webhook-endpoint.commands';
import { workspaceCommands } from './commands/workspace.commands';
import { AdminApiError, CommandFailedError, ConnectionError, EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, UsageError } from './errors';
import { Output, type Io } from './output';
import { resolveConnection } from './settings';

export const PROG = 'pnpm admin';

export const COMMANDS: CommandSpec[] = [
  ...workspaceCommands,
  ...hostCommands,
  ...eventTypeCommands,
  ...webhookEndpointCommands,
  ...deliveryCommands,
  ...dlqCommands,
  ...secretsCommands,
];

const GROUPS = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]!))];
/** Global flags that take a value, so the command words can be found around them. */
const VALUE_FLAGS = new Set(GLOBAL_OPTIONS.filter((o) => o.type === 'string').map((o) => `--${o.name}`));

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    `Usage: ${PROG} <command> [options]`,
    '',
    'Administers workspaces over the admin API (decisions.md §13) of a running gateway.',
    '',
    'Commands:',
    ...lines,
    '',
    'Global options: --url <url> (default $ADMIN_URL or http://127.0.0.1:8080), --token <token> (default $ADMIN_TOKEN,',
    'else .data/dev-secrets.json written by `npm start`), --json (JSON for scripts), -h/--help.',
    `Run \`${PROG} <command> --help\` for the options of a command. Exit codes: 0 done, 1 API error, 2 usage error.`,
    '',
  ].join('\n');
}

function groupHelp(group: string): string {
  const cmds = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  const width = Math.max(...cmds.map((c) => c.name.length));
  return [`Usage: ${PROG} ${group} <${cmds.map((c) => c.name.split(' ')[1]).join('|')}> [options]`, '', ...cmds.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`), ''].join('\n');
}

/**
 * Splits argv into the command words (group, action) and everything else. Global options may come
 * before the command (`pnpm admin --json dlq status`); a command's own options come after it.
 */
function locateCommand(argv: string[]): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (words.length < 2 && !token.startsWith('-')) {
      words.push(token);
      continue;
    }
    rest.push(token);
    if (VALUE_FLAGS.has(token) && i + 1 < argv.length) rest.push(argv[++i]!);
  }
  return { words, rest };
}

function formatApiError(err: AdminApiError): string {
  const lines = [`error: ${err.code} (HTTP ${err.status}): ${err.message}`];
  for (const d of err.details) lines.push(`  - ${d.field || '(body)'}: ${d.issue}`);
  if (err.status === 401) lines.push('  hint: check the admin token (--token, $ADMIN_TOKEN or .data/dev-secrets.json)');
  if (err.requestId) lines.push(`request id: ${err.requestId}`);
  return `${lines.join('\n')}\n`;
}

/** Runs one command line; returns the exit code. Never throws for user mistakes or API answers. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  const { words, rest } = locateCommand(argv);
  const wantsHelp = rest.includes('--help') || rest.includes('-h');
  if (words.length === 0 || (words.length === 1 && words[0] === 'help')) {
    io.stdout(mainHelp());
    return words.length === 0 && !wantsHelp ? EXIT_USAGE : EXIT_OK;
  }
  const spec = COMMANDS.find((c) => c.name === words.join(' '));
  if (!spec) {
    if (words.length === 1 && GROUPS.includes(words[0]!)) {
      io[wantsHelp ? 'stdout' : 'stderr'](groupHelp(words[0]!));
      return wantsHelp ? EXIT_OK : EXIT_USAGE;
    }
    io.stderr(`error: unknown command "${words.join(' ')}"\nRun \`${PROG} --help\` for the list of commands.\n`);
    return EXIT_USAGE;
  }

  try {
    const { opts, args } = parseCommandLine(spec, rest);
    if (opts.help) {
      io.stdout(commandHelp(spec, PROG));
      return EXIT_OK;
    }
    let api: AdminApi | undefined;
    await spec.run({
      io,
      out: new Output(io, opts.json === true),
      opts,
      args,
      api: () => (api ??= new AdminApi({ ...connection(opts, io), fetch: io.fetch })),
      workspace: () => {
        const ws = stringOption(opts, 'workspace') ?? io.env.ADMIN_WORKSPACE;
        if (!ws) throw new UsageError('--workspace is required (or set ADMIN_WORKSPACE)', spec.name);
        return ws;
      },
    });
    return EXIT_OK;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\nRun \`${PROG} ${err.command ?? spec.name} --help\` for usage.\n`);
      return EXIT_USAGE;
    }
    if (err instanceof AdminApiError) {
      io.stderr(formatApiError(err));
      return EXIT_API_ERROR;
    }
    if (err instanceof ConnectionError) {
      io.stderr(`error: ${err.message}: is the gateway running? (npm start)\n`);
      return EXIT_API_ERROR;
    }
    if (err instanceof CommandFailedError) {
      io.stderr(`error: ${err.message}\n`);
      return EXIT_API_ERROR;
    }
    throw err;
  }
}

function connection(opts: Record<string, unknown>, io: Io): { baseUrl: string; token: string } {
  const { url, token } = resolveConnection({ url: opts.url as string | undefined, token: opts.token as string | undefined }, io.env, io.cwd);
  return { baseUrl: url, token };
}
