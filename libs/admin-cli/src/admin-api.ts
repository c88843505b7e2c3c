import { AdminApiError, ConnectionError } from './errors';

export interface AdminApiConfig {
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface Envelope {
  data: unknown;
  meta: { request_id?: string; next_cursor?: string | null } & Record<string, unknown>;
}

type Query = Record<string, string | undefined>;

function causeCode(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if ((err as { name?: string }).name === 'TimeoutError') return 'timed out';
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/** Thin HTTP client of the admin API: bearer token, JSON in and out, the envelope back. */
export class AdminApi {
  private readonly base: string;

  constructor(private readonly config: AdminApiConfig) {
    this.base = config.baseUrl.replace(/\/+$/, '');
  }

  async request(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, opts: { body?: unknown; query?: Query } = {}): Promise<Envelope> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) params.append(k, v);
    const url = `${this.base}${path}${params.size > 0 ? `?${params.toString()}` : ''}`;
    const headers: Record<string, string> = { authorization: `Bearer ${this.config.token}`, accept: 'application/json' };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await (this.config.fetch ?? fetch)(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 60_000),
      });
      text = await res.text();
    } catch (err) {
      throw new ConnectionError(this.base, causeCode(err));
    }
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const requestId = res.headers.get('x-request-id');
    if (res.ok) return (body as Envelope | undefined) ?? { data: null, meta: { request_id: requestId ?? undefined } };
    const error = (body as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    if (error && typeof error.code === 'string') {
      const details = Array.isArray(error.details) ? (error.details as Array<{ field: string; issue: string }>) : [];
      throw new AdminApiError(res.status, error.code, error.message ?? '', details, (body as Envelope).meta?.request_id ?? requestId);
    }
    throw new AdminApiError(res.status, 'unexpected_response', `HTTP ${res.status} without the API's JSON envelope`, [], requestId);
  }
}
