import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The page `pnpm bench --report` (scripts/bench.mjs) renders from these figures files (name → figures),
 * written to a temporary folder that is removed afterwards; no system runs.
 */
export function renderBenchReport(files: Record<string, object>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-report-'));
  try {
    for (const [name, figures] of Object.entries(files)) writeFileSync(path.join(dir, name), JSON.stringify(figures));
    const page = path.join(dir, 'benchmarks.md');
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/bench.mjs'), '--report'], { env: { ...process.env, BENCH_DATA_DIR: dir, BENCH_REPORT_FILE: page }, stdio: ['ignore', 'ignore', 'pipe'] });
    return readFileSync(page, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The cells of the page's first table row whose first cell starts with `figure`. */
export function reportRow(page: string, figure: string): string[] {
  const line = page.split('\n').find((l) => l.startsWith(`| ${figure}`));
  if (!line) throw new Error(`no row "${figure}"`);
  return line.split(' | ').map((c) => c.replace(/^\| | \|$/g, ''));
}
