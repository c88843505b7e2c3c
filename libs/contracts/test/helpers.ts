import type { z } from 'zod';

export interface Detail {
  field: string;
  issue: string;
}

/**
 * The mapping @sched/http applies (zod issue → `{field, issue}`), reproduced so tests can say which
 * detail a caller would see.
 */
export function details(schema: z.ZodType, value: unknown): Detail[] {
  const r = schema.safeParse(value, { reportInput: true });
  if (r.success) return [];
  const out: Detail[] = [];
  for (const i of r.error.issues) {
    const field = i.path.map(String).join('.');
    const custom = (i as { params?: { issue?: string } }).params?.issue;
    if (custom) {
      out.push({ field, issue: custom });
      continue;
    }
    switch (i.code) {
      case 'unrecognized_keys':
        for (const k of i.keys) out.push({ field: field ? `${field}.${k}` : k, issue: 'unknown_field' });
        break;
      case 'invalid_type':
        out.push({ field, issue: i.input === undefined ? 'required' : 'invalid_type' });
        break;
      case 'too_big':
        out.push({ field, issue: i.origin === 'string' ? 'too_long' : 'out_of_range' });
        break;
      case 'too_small':
        out.push({ field, issue: i.origin === 'string' || i.origin === 'array' ? 'too_short' : 'out_of_range' });
        break;
      case 'invalid_format':
        out.push({ field, issue: 'invalid_format' });
        break;
      case 'invalid_value':
        out.push({ field, issue: i.input === undefined ? 'required' : 'invalid_value' });
        break;
      default:
        out.push({ field, issue: i.code });
    }
  }
  return out;
}

export function ok(schema: z.ZodType, value: unknown): void {
  const d = details(schema, value);
  if (d.length > 0) throw new Error(`expected success, got ${JSON.stringify(d)}`);
}
