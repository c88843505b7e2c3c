import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8080';
export const DEV_SECRETS_FILE = path.join('.data', 'dev-secrets.json');

/**
 * Where to connect and with what: flags first, then ADMIN_URL / ADMIN_TOKEN, then (for the token)
 * the development secrets `npm start` writes to ./.data/dev-secrets.json.
 */
export function resolveConnection(flags: { url?: string; token?: string }, env: Record<string, string | undefined>, cwd: string): { url: string; token: string } {
  const url = flags.url ?? env.ADMIN_URL ?? DEFAULT_ADMIN_URL;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UsageError(`--url / ADMIN_URL must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  const token = flags.token ?? (env.ADMIN_TOKEN || undefined) ?? devSecretsToken(cwd);
  if (!token) {
    throw new UsageError(`no admin token: pass --token, set ADMIN_TOKEN, or run \`npm start\` here (it writes ${DEV_SECRETS_FILE})`);
  }
  return { url, token };
}

function devSecretsToken(cwd: string): string | undefined {
  const file = path.join(cwd, DEV_SECRETS_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const secrets = JSON.parse(readFileSync(file, 'utf8')) as { ADMIN_TOKEN?: unknown };
    return typeof secrets.ADMIN_TOKEN === 'string' && secrets.ADMIN_TOKEN ? secrets.ADMIN_TOKEN : undefined;
  } catch {
    throw new UsageError(`${DEV_SECRETS_FILE} is not valid JSON; set ADMIN_TOKEN instead`);
  }
}
