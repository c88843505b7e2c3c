import { buildSync } from 'esbuild';

/** The browser module the page runs (browser/, type checked with the DOM types by its own tsconfig). */
const ENTRY = 'browser/booking-page.ts';

let bundled: string | undefined;

/**
 * The booking page's script: `browser/booking-page.ts` and its imports bundled by esbuild into one
 * ES2017 script for any current browser (an IIFE: no globals, no modules to load, so the CSP's
 * `script-src 'self'` and one file suffice).
 *
 * Run from source (tests, tsx) it is bundled on the first call, so a gateway that never serves the page
 * never pays for it. `pnpm build` (scripts/build.mjs) calls this same function and puts the module
 * back as one that returns the finished string, in the gateway's bundle: the image carries the
 * script, not esbuild (it ships only dist/).
 */
export function bookingPageScript(): string {
  bundled ??= bundleBrowserScript(ENTRY);
  return bundled;
}

function bundleBrowserScript(entry: string): string {
  const result = buildSync({
    entryPoints: [entry],
    // Paths (in the bundle's comments) relative to this folder: the same script, and ETag, from any cwd.
    absWorkingDir: __dirname,
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'iife',
    target: 'es2017',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const out = result.outputFiles[0];
  if (!out) throw new Error(`esbuild produced no output for ${entry}`);
  return out.text;
}
