import { z } from 'zod';

/** A JSON Schema (2020-12) object as zod emits it; kept loose on purpose, it is only passed along. */
export type JsonSchema = { [key: string]: unknown };
export type Io = 'input' | 'output';

const REF_PREFIX = '#/components/schemas/';

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/') ? REF_PREFIX + v.slice('#/$defs/'.length) : rewriteRefs(v);
  }
  return out;
}

export function componentRef(id: string): JsonSchema {
  return { $ref: REF_PREFIX + id };
}

/**
 * Collects the components of the document from the contracts' zod schemas, so the document can
 * never drift from what the services validate with. Every schema with a `.meta({id})` becomes a
 * component named by that id and is referenced, never copied.
 *
 * Requests are converted with io 'input' (their wire form: timestamps are strings the schema turns
 * into Dates) and responses with io 'output'. A component reached in both modes must come out the
 * same in both; if it ever did not, one name would stand for two shapes, so that is refused here
 * rather than papered over.
 */
export class SchemaComponents {
  private readonly schemas = new Map<string, { schema: JsonSchema; io: Io }>();

  /** The schema of `zodSchema` for use in the document: a $ref when it has an id, else inline. */
  use(zodSchema: z.ZodType, io: Io): JsonSchema {
    const json = z.toJSONSchema(zodSchema, { io, target: 'draft-2020-12', unrepresentable: 'throw' }) as JsonSchema;
    const { $schema: _dialect, $defs, ...root } = json;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
      if (/^__schema\d+$/.test(id)) {
        throw new Error(`openapi: an unnamed schema is shared inside ${JSON.stringify(root)}; give it a .meta({id}) in libs/contracts`);
      }
      this.add(id, rewriteRefs(def) as JsonSchema, io);
    }
    return rewriteRefs(root) as JsonSchema;
  }

  private add(id: string, schema: JsonSchema, io: Io): void {
    const known = this.schemas.get(id);
    if (!known) {
      this.schemas.set(id, { schema, io });
      return;
    }
    if (JSON.stringify(known.schema) !== JSON.stringify(schema)) {
      throw new Error(`openapi: component ${id} differs between its ${known.io} and ${io} forms; split it into two named schemas in libs/contracts`);
    }
  }

  /** The component a `{$ref}` points to, or the schema itself when it is inline. */
  resolve(schema: JsonSchema): JsonSchema {
    const ref = schema.$ref;
    if (typeof ref !== 'string' || !ref.startsWith(REF_PREFIX)) return schema;
    const known = this.schemas.get(ref.slice(REF_PREFIX.length));
    if (!known) throw new Error(`openapi: unknown component ${ref}`);
    return known.schema;
  }

  /** Components sorted by name, so the document is byte-for-byte stable. */
  toObject(): Record<string, JsonSchema> {
    const out: Record<string, JsonSchema> = {};
    for (const id of [...this.schemas.keys()].sort()) out[id] = this.schemas.get(id)!.schema;
    return out;
  }
}
