import { canonicalAddress, isAllowedAddress, isLocalhostName, type AddressMode } from './address';

export type UrlProblem = 'invalid_format' | 'scheme_not_allowed' | 'credentials_not_allowed' | 'address_not_allowed';

export interface TargetUrl {
  url: URL;
  /** Host name without IPv6 brackets. */
  host: string;
  /** Set when the host is an IP literal: no DNS lookup happens, so the address is checked here. */
  ipLiteral?: string;
}

export interface TargetRules {
  /** Schemes allowed in production mode (`https:` for webhooks); local mode allows http and https. */
  productionSchemes: readonly ('https:' | 'http:')[];
}

const LOCAL_SCHEMES: readonly string[] = ['https:', 'http:'];

/**
 * The checks a URL gets before anything connects to it (at registration, and again before every
 * connection): http or https as `rules` allow in this mode, no user:password (it would be stored and
 * shown in plain text), an IP literal must itself be allowed, and in production mode `localhost`
 * names are refused by name. Other names are the DNS check's (guardedLookup), on the addresses the
 * socket connects to.
 */
export function checkTargetUrl(raw: string, mode: AddressMode, rules: TargetRules): { ok: true; target: TargetUrl } | { ok: false; problem: UrlProblem } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'invalid_format' };
  }
  const schemes: readonly string[] = mode === 'production' ? rules.productionSchemes : LOCAL_SCHEMES;
  if (!schemes.includes(url.protocol)) return { ok: false, problem: 'scheme_not_allowed' };
  if (url.username || url.password) return { ok: false, problem: 'credentials_not_allowed' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) return { ok: false, problem: 'invalid_format' };
  const literal = canonicalAddress(host);
  if (literal !== null) {
    if (!isAllowedAddress(literal, mode)) return { ok: false, problem: 'address_not_allowed' };
    return { ok: true, target: { url, host, ipLiteral: literal } };
  }
  if (mode === 'production' && isLocalhostName(host)) return { ok: false, problem: 'address_not_allowed' };
  return { ok: true, target: { url, host } };
}
