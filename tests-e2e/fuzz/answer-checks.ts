import type { ResponseValidator } from '../../libs/openapi/src';
import type { FuzzRequest } from './request-generator';

/**
 * The rules every fuzzed answer must keep: no 5xx, a status the document lists for the
 * operation (or one the gateway sends on any path: 401/404/405/413/415/429) with the error
 * envelope, no stack trace, file path or SQL in an error body, and no id of workspace B in an
 * answer given to workspace A.
 */

export type Violation = 'fivexx' | 'undocumented' | 'stackTrace' | 'crossWorkspace' | 'transport';

export interface Finding {
  kind: Violation;
  request: FuzzRequest;
  status: number;
  detail: string;
  body: string;
}

/** Statuses the gateway (or the HTTP layer of every service) can send on any path. */
const ANY_PATH = new Set([401, 404, 405, 413, 415, 429]);

const LEAKS: [RegExp, string][] = [
  [/\n\s+at [^\n]+/, 'stack frame'],
  [/\bat [\w.$<>]+ \([^)]*:\d+:\d+\)/, 'stack frame'],
  [/(?:\/work\/|\/home\/|\/usr\/|node_modules|[\w-]+\.(?:ts|js|mjs):\d+)/, 'file path'],
  [/\b(?:SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b/, 'SQL'],
  [/violates|duplicate key value|syntax error at or near|relation "|column "/, 'SQL error'],
  [/ECONNREFUSED|ETIMEDOUT|TypeError|ReferenceError|Cannot read propert/, 'internal error text'],
];

function envelopeProblem(status: number, headers: Headers, body: any): string | null {
  const e = body?.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || !Array.isArray(e.details)) return `status ${status} without the error envelope`;
  if (typeof body.meta?.request_id !== 'string') return `status ${status} without meta.request_id`;
  if (headers.get('x-request-id') !== body.meta.request_id) return 'X-Request-Id differs from meta.request_id';
  if (status === 401 && !/^Bearer/i.test(headers.get('www-authenticate') ?? '')) return '401 without WWW-Authenticate: Bearer';
  if (status === 405 && !headers.get('allow')) return '405 without Allow';
  return null;
}

function decodes(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

export function judge(
  req: FuzzRequest,
  answer: { status: number; headers: Headers; text: string },
  validator: ResponseValidator,
  foreignIds: string[],
): Finding[] {
  const found: Finding[] = [];
  const add = (kind: Violation, detail: string) => found.push({ kind, request: req, status: answer.status, detail, body: answer.text.slice(0, 600) });
  let body: unknown;
  try {
    body = answer.text ? JSON.parse(answer.text) : undefined;
  } catch {
    body = undefined;
    if (answer.text) add('undocumented', 'body is not JSON');
  }
  if (answer.status >= 500) add('fivexx', `status ${answer.status}`);

  const pathname = new URL(req.path, 'http://x').pathname;
  const problems = validator.validate({ method: req.method, path: pathname, status: answer.status, headers: answer.headers, body });
  const statusUnlisted = problems.some((p) => /is not documented|no documented path|method not documented/.test(p));
  if (statusUnlisted) {
    // A path whose percent-escapes are not UTF-8 cannot be routed at all: 400 with the envelope is right there.
    const malformedUrl = answer.status === 400 && !decodes(pathname);
    if (!ANY_PATH.has(answer.status) && !malformedUrl) add('undocumented', problems.join('; '));
    else {
      const env = envelopeProblem(answer.status, answer.headers, body);
      if (env) add('undocumented', env);
    }
  } else if (problems.length) {
    add('undocumented', problems.join('; '));
  } else if (answer.status >= 400) {
    const env = envelopeProblem(answer.status, answer.headers, body);
    if (env) add('undocumented', env);
  }

  if (answer.status >= 400) {
    for (const [re, what] of LEAKS) {
      const m = re.exec(answer.text);
      if (m) add('stackTrace', `${what}: ${m[0].slice(0, 80)}`);
    }
  }
  if (req.asA) {
    const leaked = foreignIds.filter((id) => answer.text.includes(id));
    if (leaked.length) add('crossWorkspace', `contains ${leaked.join(', ')}`);
  }
  return found;
}
