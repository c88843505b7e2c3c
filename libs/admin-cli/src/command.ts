import { parseArgs } from 'node:util';
import type { AdminApi } from './admin-api';
import { UsageError } from './errors';
import type { Io, Output } from './output';

export interface OptionSpec {
  name: string;
  short?: string;
  type: 'string' | 'boolean';
  /** Placeholder in the help, e.g. `<id>`. */
  value?: string;
  description: string;
  required?: boolean;
}

export interface ArgSpec {
  name: string;
  description: string;
}

export type OptionValues = Record<string, string | boolean | undefined>;

export interface CommandContext {
  io: Io;
  out: Output;
  /** Created on first use, so `--help` needs no token. */
  api(): AdminApi;
  opts: OptionValues;
  args: string[];
  /** The workspace of a workspace-scoped command: --workspace or ADMIN_WORKSPACE. */
  workspace(): string;
}

export interface CommandSpec {
  /** e.g. `api-key create`. */
  name: string;
  summary: string;
  description?: string;
  args?: ArgSpec[];
  options: OptionSpec[];
  /** Takes --workspace (default $ADMIN_WORKSPACE). */
  workspaceScoped?: boolean;
  run(ctx: CommandContext): Promise<void>;
}

export const WORKSPACE_OPTION: OptionSpec = {
  name: 'workspace',
  short: 'w',
  type: 'string',
  value: '<wsp_…>',
  description: 'workspace id (default: $ADMIN_WORKSPACE)',
};

export const GLOBAL_OPTIONS: OptionSpec[] = [
  { name: 'url', type: 'string', value: '<url>', description: 'admin API base URL (default: $ADMIN_URL or http://127.0.0.1:8080)' },
  { name: 'token', type: 'string', value: '<token>', description: 'admin token (default: $ADMIN_TOKEN, else .data/dev-secrets.json)' },
  { name: 'json', type: 'boolean', description: 'print the JSON data instead of tables (for scripts)' },
  { name: 'help', short: 'h', type: 'boolean', description: 'show help' },
];

export function optionsOf(spec: CommandSpec): OptionSpec[] {
  return [...(spec.workspaceScoped ? [WORKSPACE_OPTION] : []), ...spec.options, ...GLOBAL_OPTIONS];
}

/** Parses the flags and positionals after the command words; any mistake is a UsageError. */
export function parseCommandLine(spec: CommandSpec, argv: string[]): { opts: OptionValues; args: string[] } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const o of optionsOf(spec)) options[o.name] = o.short ? { type: o.type, short: o.short } : { type: o.type };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''), spec.name);
  }
  const opts = parsed.values as OptionValues;
  if (opts.help) return { opts, args: parsed.positionals };
  const expected = spec.args ?? [];
  if (parsed.positionals.length < expected.length) {
    throw new UsageError(`missing <${expected[parsed.positionals.length]!.name}>`, spec.name);
  }
  if (parsed.positionals.length > expected.length) {
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[expected.length])}`, spec.name);
  }
  for (const o of spec.options) {
    if (o.required && (opts[o.name] === undefined || opts[o.name] === '')) throw new UsageError(`--${o.name} is required`, spec.name);
  }
  return { opts, args: parsed.positionals };
}

function optionLine(o: OptionSpec): [string, string] {
  const flag = `${o.short ? `-${o.short}, ` : '    '}--${o.name}${o.value ? ` ${o.value}` : ''}`;
  return [flag, `${o.description}${o.required ? ' (required)' : ''}`];
}

function columns(lines: Array<[string, string]>): string {
  const width = Math.max(...lines.map(([a]) => a.length));
  return lines.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`).join('\n');
}

export function commandHelp(spec: CommandSpec, prog: string): string {
  const args = (spec.args ?? []).map((a) => ` <${a.name}>`).join('');
  const parts = [`Usage: ${prog} ${spec.name}${args} [options]`, '', spec.summary];
  if (spec.description) parts.push('', spec.description);
  if (spec.args?.length) parts.push('', 'Arguments:', columns(spec.args.map((a) => [`<${a.name}>`, a.description])));
  const own = [...(spec.workspaceScoped ? [WORKSPACE_OPTION] : []), ...spec.options];
  if (own.length > 0) parts.push('', 'Options:', columns(own.map(optionLine)));
  parts.push('', 'Global options:', columns(GLOBAL_OPTIONS.map(optionLine)));
  return `${parts.join('\n')}\n`;
}

/** Reads an integer flag; anything else is a usage error naming the flag. */
export function intOption(opts: OptionValues, name: string): number | undefined {
  const v = opts[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^-?\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
}

export function stringOption(opts: OptionValues, name: string): string | undefined {
  const v = opts[name];
  return typeof v === 'string' ? v : undefined;
}

/** A comma-separated list flag: `--scopes a,b` → ['a', 'b']. */
export function listOption(opts: OptionValues, name: string): string[] | undefined {
  const v = stringOption(opts, name);
  return v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

export function pathId(id: string): string {
  return encodeURIComponent(id);
}
