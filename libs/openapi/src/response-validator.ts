import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonSchema } from './schema-components';

/** Node's IncomingHttpHeaders / supertest's header object, or a fetch Headers. */
export type HeaderSource = Record<string, string | string[] | number | undefined> | Headers;

export interface ResponseToValidate {
  method: string;
  /** The actual path, e.g. `/v1/bookings/bkg_x`; a query string is ignored. */
  path: string;
  status: number;
  headers?: HeaderSource;
  /** The parsed JSON body; undefined (or '') when there was none. */
  body?: unknown;
}

export interface ResponseValidator {
  /** Mismatch messages; empty when the response is what the document says. */
  validate(response: ResponseToValidate): string[];
}

interface PathEntry {
  template: string;
  re: RegExp;
  literals: number;
  item: JsonSchema;
}

const BASE = 'urn:sched:openapi';

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function pathEntries(doc: JsonSchema): PathEntry[] {
  const entries = Object.entries((doc.paths ?? {}) as Record<string, JsonSchema>).map(([template, item]) => {
    const segments = template.split('/');
    const re = new RegExp(`^${segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : escapeRe(s))).join('/')}$`);
    return { template, re, literals: segments.filter((s) => !s.startsWith('{')).length, item };
  });
  // A literal segment wins over a parameter (…/webhook-deliveries/replay before …/{id}).
  return entries.sort((a, b) => b.literals - a.literals || a.template.localeCompare(b.template));
}

/** Points `#/components/schemas/X` at the copy of the components the validator holds. */
function relocateRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(relocateRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/') ? `${BASE}#/$defs/${v.slice('#/components/schemas/'.length)}` : relocateRefs(v);
  }
  return out;
}

function normalizeHeaders(source: HeaderSource | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!source) return out;
  if (source instanceof Headers) {
    source.forEach((v, k) => out.set(k.toLowerCase(), v));
    return out;
  }
  for (const [k, v] of Object.entries(source)) {
    if (v === undefined) continue;
    out.set(k.toLowerCase(), Array.isArray(v) ? v.join(', ') : String(v));
  }
  return out;
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const at = `body${e.instancePath || ''}`;
    if (e.keyword === 'additionalProperties') return `${at}: unexpected property "${String((e.params as { additionalProperty: string }).additionalProperty)}"`;
    if (e.keyword === 'required') return `${at}: missing property "${String((e.params as { missingProperty: string }).missingProperty)}"`;
    if (e.keyword === 'enum') return `${at}: ${e.message} (${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)})`;
    return `${at}: ${e.message ?? e.keyword}`;
  });
}

/**
 * Checks real responses against the document: the path template, the method, the status (an
 * undocumented status is a mismatch), required headers, and the JSON body against the response
 * schema with Ajv (JSON Schema 2020-12). Meant for tests that exercise the running system.
 */
export function createResponseValidator(doc: object): ResponseValidator {
  const document = doc as JsonSchema;
  const components = ((document.components as JsonSchema | undefined)?.schemas ?? {}) as JsonSchema;
  const componentHeaders = ((document.components as JsonSchema | undefined)?.headers ?? {}) as Record<string, JsonSchema>;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: BASE, $defs: relocateRefs(components) as JsonSchema });
  const compiled = new Map<string, ValidateFunction>();
  const paths = pathEntries(document);

  const compile = (key: string, schema: JsonSchema): ValidateFunction => {
    let fn = compiled.get(key);
    if (!fn) {
      fn = ajv.compile(relocateRefs(schema) as JsonSchema);
      compiled.set(key, fn);
    }
    return fn;
  };

  const componentResponses = ((document.components as JsonSchema | undefined)?.responses ?? {}) as Record<string, JsonSchema>;
  const sharedResponse = (r: JsonSchema): JsonSchema => {
    const ref = r.$ref;
    return typeof ref === 'string' ? (componentResponses[ref.replace('#/components/responses/', '')] ?? {}) : r;
  };

  const header = (h: JsonSchema): JsonSchema => {
    const ref = h.$ref;
    return typeof ref === 'string' ? (componentHeaders[ref.replace('#/components/headers/', '')] ?? {}) : h;
  };

  function validate(r: ResponseToValidate): string[] {
    const method = r.method.toLowerCase();
    const rawPath = r.path.split('?')[0] ?? '';
    const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
    const label = `${r.method.toUpperCase()} ${path}`;
    const entry = paths.find((p) => p.re.test(path));
    if (!entry) return [`${label}: no documented path matches`];
    const operation = entry.item[method] as JsonSchema | undefined;
    if (!operation) return [`${label}: method not documented for ${entry.template}`];
    const responses = (operation.responses ?? {}) as Record<string, JsonSchema>;
    const statusKey = [String(r.status), `${Math.floor(r.status / 100)}XX`, 'default'].find((k) => k in responses);
    if (!statusKey) return [`${label}: status ${r.status} is not documented for ${r.method.toUpperCase()} ${entry.template} (documented: ${Object.keys(responses).join(', ')})`];
    const response = sharedResponse(responses[statusKey]!);
    const problems: string[] = [];

    const headers = normalizeHeaders(r.headers);
    for (const [name, h] of Object.entries((response.headers ?? {}) as Record<string, JsonSchema>)) {
      const def = header(h);
      const value = headers.get(name.toLowerCase());
      if (value === undefined) {
        if (def.required === true) problems.push(`header ${name} is missing`);
        continue;
      }
      const schema = (def.schema ?? {}) as JsonSchema;
      const typed = schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      const check = compile(`header ${name} ${JSON.stringify(schema)}`, schema);
      if (!check(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${check.errors?.[0]?.message ?? 'is invalid'}`);
    }

    const content = (response.content as Record<string, JsonSchema> | undefined)?.['application/json'];
    const hasBody = r.body !== undefined && r.body !== '' && r.body !== null;
    if (!content) {
      if (hasBody) problems.push(`body: none documented for status ${r.status}`);
    } else if (!hasBody) {
      problems.push('body is missing');
    } else if (content.schema) {
      const check = compile(`${entry.template} ${method} ${statusKey}`, content.schema as JsonSchema);
      if (!check(r.body)) problems.push(...describe(check.errors));
      const requestId = headers.get('x-request-id');
      const metaId = (r.body as { meta?: { request_id?: unknown } }).meta?.request_id;
      if (requestId !== undefined && typeof metaId === 'string' && metaId !== requestId) {
        problems.push(`body/meta/request_id ${JSON.stringify(metaId)} differs from X-Request-Id ${JSON.stringify(requestId)}`);
      }
    }
    // allOf branches can report the same problem twice.
    return [...new Set(problems)].map((p) => `${label} ${r.status}: ${p}`);
  }

  return { validate };
}
