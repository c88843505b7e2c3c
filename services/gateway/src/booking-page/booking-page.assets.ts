import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { bookingPageHtml } from './page-html';
import { bookingPageScript } from './page-script';
import { BOOKING_PAGE_CSS } from './page-styles';

export interface StaticAsset {
  contentType: string;
  body: string;
  etag: string;
}

function asset(contentType: string, body: string): StaticAsset {
  return { contentType, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/** Made on first use (the script is bundled then, when run from source), then kept. */
function lazyAsset(contentType: string, body: () => string): () => StaticAsset {
  let made: StaticAsset | undefined;
  return () => (made ??= asset(contentType, body()));
}

const ASSETS = new Map<string, () => StaticAsset>([
  ['booking-page.js', lazyAsset('text/javascript; charset=utf-8', bookingPageScript)],
  ['booking-page.css', lazyAsset('text/css; charset=utf-8', () => BOOKING_PAGE_CSS)],
]);

/** The page's script and styles, by file name under `{base}/assets/`; undefined for any other name. */
export function bookingPageAsset(file: string): StaticAsset | undefined {
  return ASSETS.get(file)?.();
}

export function bookingPageDocument(basePath: string): StaticAsset {
  return asset('text/html; charset=utf-8', bookingPageHtml(basePath));
}

/**
 * Headers of every booking page answer. The CSP allows only this origin's own script, styles and API
 * (no inline code); no-referrer keeps the credential of /i/<credential> out of any Referer; no-store
 * because the HTML of an invitation URL must not sit in a shared cache.
 */
export function setPageSecurityHeaders(res: Response): void {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  );
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
}

export function sendAsset(res: Response, status: number, a: StaticAsset, cache: 'no-store' | 'short'): void {
  setPageSecurityHeaders(res);
  res.setHeader('Content-Type', a.contentType);
  res.setHeader('Cache-Control', cache === 'no-store' ? 'no-store' : 'public, max-age=300');
  if (cache === 'short') res.setHeader('ETag', a.etag);
  res.status(status).send(a.body);
}
