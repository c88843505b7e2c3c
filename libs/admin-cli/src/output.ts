export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
  /** True when stderr is a terminal: the progress line then updates in place. */
  isTTY?: boolean;
  fetch?: typeof fetch;
  readFile?: (path: string) => string;
  readStdin?: () => Promise<string>;
}

type Row = Record<string, unknown>;

/** A cell: null/undefined as `-`, arrays joined, objects as compact JSON. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/\s+/g, ' ');
}

/** A plain-text table with a header row, columns padded to their widest cell. */
export function renderTable(rows: Row[], columns: string[]): string {
  const header = columns.map((c) => c.toUpperCase());
  const body = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i]!.length)));
  const fmt = (line: string[]) => line.map((v, i) => (i === line.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return [fmt(header), ...body.map(fmt)].join('\n');
}

/** One resource as `key  value` lines, in the resource's own field order. */
export function renderResource(resource: Row): string {
  const keys = Object.keys(resource);
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys.map((k) => `${k.padEnd(width)}  ${cell(resource[k])}`).join('\n');
}

/** The preferred columns that occur in at least one row, in the preferred order. */
export function presentColumns(rows: Row[], preferred: string[]): string[] {
  const seen = new Set(rows.flatMap((r) => Object.keys(r)));
  const cols = preferred.filter((c) => seen.has(c));
  return cols.length > 0 ? cols : [...seen].slice(0, 8);
}

export class Output {
  constructor(
    private readonly io: Io,
    readonly json: boolean,
  ) {}

  /** Machine output: the `data` of the answer, pretty JSON, on stdout. */
  data(value: unknown): void {
    this.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  }

  line(text = ''): void {
    this.io.stdout(`${text}\n`);
  }

  /** Notes for people (progress, warnings) go to stderr so stdout stays clean for scripts. */
  note(text: string): void {
    this.io.stderr(`${text}\n`);
  }

  resource(resource: unknown): void {
    if (this.json) return this.data(resource);
    if (resource && typeof resource === 'object' && !Array.isArray(resource)) this.line(renderResource(resource as Row));
    else this.line(cell(resource));
  }

  table(rows: unknown, preferred: string[], empty = 'nothing to show'): void {
    if (this.json) return this.data(rows);
    const list = (Array.isArray(rows) ? rows : []) as Row[];
    if (list.length === 0) return this.line(empty);
    this.line(renderTable(list, presentColumns(list, preferred)));
  }

  /** A one-time secret (API key, webhook secret): said loudly, once. */
  secret(label: string, value: unknown): void {
    if (this.json) return;
    this.line();
    this.line(`${label}: ${cell(value)}`);
    this.line(`  shown once: store it now (e.g. in your secret manager); it cannot be shown again.`);
  }
}
