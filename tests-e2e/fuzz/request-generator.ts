import fc from 'fast-check';
import { cursorValue, encodeSegment, extraFieldName, headerJunk, hugeString, junkString, timestampValue, toJson, wrongType } from './fuzz-values';

/**
 * Turns every operation of the OpenAPI document into a fast-check arbitrary of hostile
 * requests: schema-valid bodies and their mutations (wrong types, missing and extra fields,
 * huge and unicode strings, bad timestamps), junk query parameters and cursors, ids of the
 * other workspace in paths and bodies, and bad headers.
 */

type Schema = Record<string, any>;

export interface Operation {
  method: string;
  template: string;
  op: Schema;
  /** v1 (API key), admin (admin token) or public (no auth). */
  kind: 'v1' | 'admin' | 'public';
}

export interface FuzzRequest {
  op: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Whether the answer is one for workspace A (its key or an admin path under A's workspace). */
  asA: boolean;
}

/** Ids by prefix for the path and body id pools. */
export interface IdPools {
  /** A's ids that any request may use, by prefix (bkg, evt, hst, biv, whe, whd, key, wsp). */
  a: Record<string, string[]>;
  /** A's expendable ids for destructive admin requests (revoke key, PATCH/PUT/DELETE). */
  spare: Record<string, string[]>;
  /** B's ids by prefix: in A's requests they must answer like an unknown id. */
  b: Record<string, string[]>;
}

export interface GeneratorContext {
  doc: Schema;
  ids: IdPools;
  aKey: string;
  adminToken: string;
  aWorkspace: string;
  realCursors: string[];
  freeStarts: string[];
  safeUrls: string[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function operationsOf(doc: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Schema>)) {
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (!op) continue;
      const security = (op.security ?? []) as Schema[];
      const kind = security.some((s) => 'bearer' in s) ? 'v1' : security.some((s) => 'adminToken' in s) ? 'admin' : 'public';
      out.push({ method: method.toUpperCase(), template, op, kind });
    }
  }
  return out;
}

const PARAM_PREFIX: Record<string, string> = {
  booking: 'bkg',
  bkg: 'bkg',
  eventType: 'evt',
  evt: 'evt',
  bookingInvitation: 'biv',
  host: 'hst',
  whe: 'whe',
  id: 'whd',
  key: 'key',
  ws: 'wsp',
};

const FIELD_PREFIX: Record<string, string> = { event_type_id: 'evt', host_id: 'hst', endpoint_id: 'whe' };

const unknownId = (prefix: string): fc.Arbitrary<string> => fc.base64String({ minLength: 24, maxLength: 24 }).map((s) => `${prefix}_${s.replace(/[+/=]/g, 'A')}`);

export function createGenerator(ctx: GeneratorContext) {
  const components = (ctx.doc.components?.schemas ?? {}) as Record<string, Schema>;
  const resolve = (s: Schema): Schema => (typeof s.$ref === 'string' ? resolve(components[s.$ref.split('/').pop()!] ?? {}) : s);

  /** Ids of a kind: A's (or only A's spare ones for destructive requests), B's, unknown, junk. */
  const idValue = (prefix: string, destructive: boolean): fc.Arbitrary<string> => {
    const own = (destructive ? ctx.ids.spare[prefix] : ctx.ids.a[prefix]) ?? [];
    const other = prefix === 'wsp' ? [] : (ctx.ids.b[prefix] ?? []);
    return fc.oneof(
      ...(own.length ? [{ weight: 4, arbitrary: fc.constantFrom(...own) }] : []),
      ...(other.length ? [{ weight: 3, arbitrary: fc.constantFrom(...other) }] : []),
      { weight: 2, arbitrary: unknownId(prefix) },
      { weight: 2, arbitrary: junkString(80).filter((s) => s !== '' && s !== '.' && s !== '..') },
    );
  };

  /** A schema-valid value (mostly): the starting point the mutations break. */
  const valid = (schema: Schema, name: string, depth: number): fc.Arbitrary<unknown> => {
    const s = resolve(schema);
    if (FIELD_PREFIX[name]) return idValue(FIELD_PREFIX[name]!, false);
    if (s.anyOf || s.oneOf) return fc.oneof(...((s.anyOf ?? s.oneOf) as Schema[]).map((b) => valid(b, name, depth)));
    if (s.allOf) return valid(s.allOf[0] as Schema, name, depth);
    if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
    if (s.const !== undefined) return fc.constant(s.const);
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    switch (type) {
      case 'string': {
        if (s.format === 'date-time' || name.endsWith('_at') || name === 'from' || name === 'to' || name === 'not_before') return timestampValue(ctx.freeStarts);
        if (s.format === 'uri' || name.endsWith('url')) return fc.constantFrom(...ctx.safeUrls);
        if (s.format === 'email' || name.endsWith('email')) return fc.constantFrom('ada@example.com', 'x@y.co', 'no-at-sign', 'a@b', 'ü@例え.jp', `${'a'.repeat(250)}@example.com`);
        if (name === 'timezone') return fc.constantFrom('UTC', 'Europe/London', 'America/New_York', 'Mars/Base', 'utc', '+01:00', 'Etc/GMT+14');
        if (typeof s.pattern === 'string') {
          try {
            return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? 200) && v.length >= (s.minLength ?? 0));
          } catch {
            /* a pattern fast-check cannot invert: fall through */
          }
        }
        return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) });
      }
      case 'integer':
      case 'number': {
        const min = typeof s.minimum === 'number' ? s.minimum : -1000;
        const max = typeof s.maximum === 'number' ? s.maximum : 100000;
        return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
      }
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return depth > 4 ? fc.constant([]) : fc.array(valid((s.items ?? {}) as Schema, name, depth + 1), { minLength: s.minItems ?? 0, maxLength: 3 });
      case 'object':
      default: {
        const props = (s.properties ?? {}) as Record<string, Schema>;
        if (!Object.keys(props).length || depth > 4) {
          return fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean()), { maxKeys: 3 });
        }
        const required = new Set((s.required ?? []) as string[]);
        const rec: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [k, v] of Object.entries(props)) rec[k] = valid(v, k, depth + 1);
        return fc.record(rec, { requiredKeys: [...required] });
      }
    }
  };

  /** Breaks one place of a valid value: replace with junk/huge/wrong type, delete it, or add an extra field. */
  const mutate = (value: unknown, pick: number, how: number, junk: unknown, huge: string, extra: string): unknown => {
    const paths: (string | number)[][] = [];
    const walk = (v: unknown, at: (string | number)[]) => {
      paths.push(at);
      if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) walk(c, [...at, Array.isArray(v) ? Number(k) : k]);
    };
    walk(value, []);
    const at = paths[pick % paths.length]!;
    const copy = structuredClone(value);
    if (at.length === 0) return how % 3 === 0 ? junk : how % 3 === 1 ? huge : { ...(copy as object), [extra]: junk };
    let parent: any = copy;
    for (const seg of at.slice(0, -1)) parent = parent[seg];
    const last = at[at.length - 1]!;
    switch (how % 4) {
      case 0:
        parent[last] = junk;
        break;
      case 1:
        parent[last] = huge;
        break;
      case 2:
        if (Array.isArray(parent)) parent.splice(Number(last), 1);
        else delete parent[last];
        break;
      default:
        if (parent && typeof parent === 'object' && !Array.isArray(parent)) parent[extra] = junk;
        else parent[last] = junk;
    }
    return copy;
  };

  const bodyFor = (o: Operation): fc.Arbitrary<string | undefined> => {
    const schema = o.op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
    const base: fc.Arbitrary<unknown> = schema ? valid(schema, '', 0) : fc.constant({});
    const hugeOrSmall = fc.oneof({ weight: 5, arbitrary: junkString(40) }, { weight: 1, arbitrary: hugeString });
    const raws = fc.constantFrom('{', '{"a":', 'not json', '[1,2', '\u0000', '{"a":1}{"b":2}', 'null', '""', '{"__proto__":{"admin":true}}', `{"a":${'['.repeat(5000)}`);
    return fc.oneof(
      { weight: schema ? 5 : 1, arbitrary: base.map(toJson) },
      { weight: 6, arbitrary: fc.tuple(base, fc.nat(), fc.nat(), wrongType, hugeOrSmall, extraFieldName).map(([v, p, h, j, g, e]) => toJson(mutate(v, p, h, j, g, e))) },
      { weight: 1, arbitrary: wrongType.map(toJson) },
      { weight: 1, arbitrary: raws },
      { weight: 2, arbitrary: fc.constant(undefined) },
    );
  };

  const queryFor = (o: Operation): fc.Arbitrary<string> => {
    const params = ((o.op.parameters ?? []) as Schema[]).map((p) => (p.$ref ? (ctx.doc.components.parameters[p.$ref.split('/').pop()!] as Schema) : p)).filter((p) => p.in === 'query');
    const one = (name: string, schema: Schema): fc.Arbitrary<string> => {
      if (name === 'cursor') return cursorValue(ctx.realCursors);
      if (name === 'limit' || name === 'max') return fc.oneof(fc.constantFrom('1', '100', '0', '101', '-1', '01', '1.5', '1e2', ' 5', '0x10', '99999999999999999999'), junkString(20));
      if (name.endsWith('_id')) return idValue(FIELD_PREFIX[name] ?? 'evt', false);
      return fc.oneof({ weight: 2, arbitrary: valid(schema, name, 0).map((v) => (typeof v === 'string' ? v : toJson(v))) }, { weight: 1, arbitrary: junkString(100) });
    };
    const entries = params.map((p) => fc.option(one(p.name as string, (p.schema ?? {}) as Schema), { freq: 2 }).map((v) => (v === null ? [] : [[p.name as string, v]])));
    const extras = fc.oneof(
      { weight: 6, arbitrary: fc.constant([] as string[][]) },
      { weight: 1, arbitrary: fc.tuple(extraFieldName, junkString(30)).map(([k, v]) => [[k, v]]) },
      // Repeated parameters arrive as arrays in express, a classic crash.
      ...(params.length ? [{ weight: 1, arbitrary: fc.constantFrom(...params.map((p) => p.name as string)).map((k) => [[k, '1'], [k, '2']]) }] : []),
      { weight: 1, arbitrary: fc.constantFrom([['a[b]', '1']], [['status[$ne]', 'x']], [['__proto__[x]', '1']]) },
    );
    return fc.tuple(fc.tuple(...entries), extras).map(([picked, extra]) => {
      const all = [...picked.flat(), ...extra] as string[][];
      return all.length ? `?${all.map(([k, v]) => `${encodeSegment(k!)}=${encodeSegment(v!)}`).join('&')}` : '';
    });
  };

  const headersFor = (o: Operation): fc.Arbitrary<Record<string, string>> => {
    const goodAuth = o.kind === 'v1' ? `Bearer ${ctx.aKey}` : o.kind === 'admin' ? `Bearer ${ctx.adminToken}` : undefined;
    const badAuth = fc.oneof(
      fc.constantFrom('', 'Bearer', 'Bearer ', 'Basic YWRtaW46YWRtaW4=', `Bearer ${ctx.aKey}x`, `Bearer ${ctx.aKey.slice(0, -1)}`, `Bearer ${ctx.adminToken}`, `Bearer ${ctx.aKey}`, `Bearer  ${ctx.aKey}`, `Token ${ctx.aKey}`, 'Bearer sk_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
      headerJunk(300).map((j) => `Bearer ${j}`),
    );
    const auth = goodAuth ? fc.oneof({ weight: 9, arbitrary: fc.constant(goodAuth) }, { weight: 1, arbitrary: badAuth }) : fc.option(badAuth, { freq: 3 }).map((v) => v ?? undefined);
    const contentType = fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      { weight: 2, arbitrary: fc.constantFrom('text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '', 'application/xml', 'application/json;charset=latin1', 'APPLICATION/JSON', 'application/merge-patch+json') },
    );
    const idem = fc.option(fc.oneof(fc.uuid(), headerJunk(300), fc.constantFrom('k'.repeat(255), 'k'.repeat(256), 'ünïcödé', ' ')), { freq: 3 });
    const requestId = fc.option(fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/), headerJunk(8000), fc.constantFrom('x'.repeat(129), 'req id', '../../x')), { freq: 3 });
    return fc.tuple(auth, contentType, idem, requestId).map(([a, ct, ik, rid]) => {
      const headers: Record<string, string> = { 'content-type': ct };
      if (a !== undefined) headers.authorization = a;
      if (ik !== null) headers['idempotency-key'] = ik;
      if (rid !== null) headers['x-request-id'] = rid;
      return headers;
    });
  };

  const pathFor = (o: Operation): fc.Arbitrary<{ path: string; aScoped: boolean }> => {
    const destructive = o.kind === 'admin' && o.method !== 'GET';
    const segments = o.template.split('/').slice(1);
    const parts = segments.map((seg) => {
      const m = /^\{(.+)\}$/.exec(seg);
      if (!m) return fc.constant({ text: seg, aScoped: false });
      const name = m[1]!;
      if (name === 'ws') {
        // Never B's workspace here: the operator may read any workspace, so B's data would be legitimate.
        return fc.oneof({ weight: 8, arbitrary: fc.constant(ctx.aWorkspace) }, { weight: 1, arbitrary: unknownId('wsp') }, { weight: 1, arbitrary: junkString(40).filter((s) => s !== '' && s !== '.' && s !== '..') }).map((v) => ({ text: encodeSegment(v), aScoped: v === ctx.aWorkspace }));
      }
      if (name === 'queue') return fc.oneof(junkString(60).filter((s) => s !== '' && s !== '.' && s !== '..'), fc.constantFrom('booking.dlq', 'nope')).map((v) => ({ text: encodeSegment(v), aScoped: false }));
      // Revoking A's main key would turn the rest of the run into 401s: only the spare one.
      const own = name === 'key' ? true : destructive;
      return idValue(PARAM_PREFIX[name] ?? 'bkg', own).map((v) => ({ text: encodeSegment(v), aScoped: false }));
    });
    return fc.tuple(...parts).map((ps) => ({ path: `/${ps.map((p) => p.text).join('/')}`, aScoped: ps.some((p) => p.aScoped) }));
  };

  /** Every hostile request for one operation; now and then with a method the path does not have. */
  const requestFor = (o: Operation): fc.Arbitrary<FuzzRequest> =>
    fc
      .tuple(pathFor(o), queryFor(o), headersFor(o), bodyFor(o), fc.oneof({ weight: 19, arbitrary: fc.constant(o.method) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE') }))
      .map(([p, q, h, body, method]) => {
        const sendsBody = method !== 'GET' && body !== undefined;
        const headers = { ...h };
        if (!sendsBody) delete headers['content-type'];
        return {
          op: `${o.method} ${o.template}`,
          method,
          path: `${p.path}${q}`,
          headers,
          body: sendsBody ? body : undefined,
          // Operator-wide admin paths (dead letters, a delivery by id) may legitimately show B.
          asA: o.kind !== 'admin' || p.aScoped || o.template === '/admin/v1/workspaces',
        };
      });

  return { requestFor };
}
